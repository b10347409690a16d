"""Real third-party services that functional tests install and start."""
