# Sourced by .ci/run: install Debian's PostgreSQL, start it, create a throw-away role and database for the
# classroom tests, and export MHA_TEST_DATABASE_URL (tests/test_classroom.py runs its PostgreSQL variant
# against it; with CI=true a missing URL fails the run instead of skipping).
# Safe to source twice: an existing cluster, role or database is reused.
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql
fi
_mha_pg_ver="$(ls /usr/lib/postgresql | sort -V | tail -n 1)"
if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -qx "${_mha_pg_ver} main"; then
  pg_createcluster "${_mha_pg_ver}" main >/dev/null
fi
if ! pg_lsclusters -h | awk -v v="${_mha_pg_ver}" '$1==v && $2=="main" {print $4}' | grep -q online; then
  pg_ctlcluster "${_mha_pg_ver}" main start
fi
_mha_pg_port="$(pg_lsclusters -h | awk -v v="${_mha_pg_ver}" '$1==v && $2=="main" {print $3}')"
_mha_pg_pw="$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
runuser -u postgres -- psql -q -v ON_ERROR_STOP=1 -p "${_mha_pg_port}" -d postgres <<SQL
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'mha_test') THEN CREATE ROLE mha_test LOGIN; END IF;
END \$\$;
ALTER ROLE mha_test PASSWORD '${_mha_pg_pw}';
SQL
# one database for a plain run, one per pytest-xdist worker (tests/dbhelpers.py worker_url; pyproject: -n 2)
for _mha_db in mha_test mha_test_gw0 mha_test_gw1; do
  if ! runuser -u postgres -- psql -tA -p "${_mha_pg_port}" -d postgres -c "SELECT 1 FROM pg_database WHERE datname='${_mha_db}'" | grep -q 1; then
    runuser -u postgres -- createdb -p "${_mha_pg_port}" -O mha_test "${_mha_db}"
  fi
done
export MHA_TEST_DATABASE_URL="postgresql+psycopg://mha_test:${_mha_pg_pw}@127.0.0.1:${_mha_pg_port}/mha_test"
unset _mha_pg_ver _mha_pg_port _mha_pg_pw _mha_db
