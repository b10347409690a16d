-- Run once by galera-1 (the node that bootstraps the cluster); Galera
-- replicates it to the others.
-- haproxy's mysql-check logs in as this user: no password, no rights.
CREATE USER IF NOT EXISTS haproxy@'%';
-- The state snapshot transfer (mariabackup) of a joining node logs in
-- as the OS user it runs as, through the socket: no password.
CREATE USER IF NOT EXISTS mysql@localhost IDENTIFIED VIA unix_socket;
GRANT RELOAD, PROCESS, LOCK TABLES, BINLOG MONITOR ON *.* TO mysql@localhost;
