"""Ashlar's shared floor: config, RPC, database, context, policy, rules."""
