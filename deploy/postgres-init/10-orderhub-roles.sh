#!/bin/sh
# Run once by the postgres image (/docker-entrypoint-initdb.d) as the superuser, when the data directory is new.
# Three roles, none of them the superuser: orderhub_owner owns the hub's database and runs `orderhub migrate`
# (CREATEROLE: the migrations create the hub's roles); orderhub_serve runs `orderhub serve` and owns nothing (a
# member of orderhub_app, the hub's serving role, created here so that the grant can be made before the first
# migration); orderpos owns the reference POS's database. Passwords come from the environment (hex, so that they
# need no escaping in a URL). tests/e2e/test_deploy_roles.py runs this script against a real cluster.
set -eu
: "${ORDERHUB_OWNER_PASSWORD:?}" "${ORDERHUB_SERVE_PASSWORD:?}" "${ORDERPOS_PASSWORD:?}"
psql -X -v ON_ERROR_STOP=1 --username "${POSTGRES_USER:-postgres}" --dbname postgres \
  -v owner_pw="$ORDERHUB_OWNER_PASSWORD" -v serve_pw="$ORDERHUB_SERVE_PASSWORD" -v pos_pw="$ORDERPOS_PASSWORD" <<'SQL'
CREATE ROLE orderhub_owner LOGIN CREATEROLE PASSWORD :'owner_pw';
CREATE ROLE orderhub_app NOLOGIN;
CREATE ROLE orderhub_serve LOGIN PASSWORD :'serve_pw' IN ROLE orderhub_app;
CREATE DATABASE orderhub OWNER orderhub_owner;
CREATE ROLE orderpos LOGIN PASSWORD :'pos_pw';
CREATE DATABASE orderpos OWNER orderpos;
SQL
