# Sourced by .ci/run: start a throwaway PostgreSQL server (Debian's `postgresql` binaries) for the
# multi-replica service tests and export IMGCHECK_TEST_PG_URL. Not the packaged 15/main cluster:
# CI machines have no systemd, and a private data dir on a free loopback port cannot collide with
# anything. postgres refuses to run as root, so the server runs as the `postgres` user the package
# created. Stopped when .ci/run exits.
start_test_postgres() {
  local bin dir port password
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -x "$bin/initdb" ] || { echo ".ci/run: no PostgreSQL server binaries under /usr/lib/postgresql"; return 1; }
  dir=$(mktemp -d /tmp/imgcheck-ci-pg.XXXXXX)
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  password=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
  printf '%s\n' "$password" >"$dir/pw"
  "${SUDO[@]}" chown -R postgres:postgres "$dir"
  as_postgres() { "${SUDO[@]}" runuser -u postgres -- "$@"; }
  as_postgres "$bin/initdb" -D "$dir/data" -U imgcheck --auth=scram-sha-256 --pwfile="$dir/pw" -E UTF8 \
    --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log"; return 1; }
  as_postgres "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir" >/dev/null || { cat "$dir/server.log"; return 1; }
  IMGCHECK_CI_PG_STOP=("${SUDO[@]}" runuser -u postgres -- "$bin/pg_ctl" -D "$dir/data" -m fast -w stop)
  IMGCHECK_CI_PG_DIR=$dir
  export IMGCHECK_TEST_PG_URL="postgresql://imgcheck:$password@127.0.0.1:$port/postgres"
}
stop_test_postgres() {
  if [ -n "${IMGCHECK_CI_PG_STOP+x}" ]; then
    "${IMGCHECK_CI_PG_STOP[@]}" >/dev/null 2>&1 || true
    "${SUDO[@]}" rm -rf "$IMGCHECK_CI_PG_DIR"
  fi
}
