-- The shared facts cache (IMGCHECK_CACHE_URL) under its own role, apart from the job store's.
-- Whoever can write these tables can make images look fine to every reader, so only this role writes
-- them; the job store's role (database-url) and everyone else cannot. Run once as the database owner:
--   psql "$ADMIN_URL" -f deploy/service-pg/cache-role.sql
--   psql "$ADMIN_URL" -c '\password imgcheck_cache'
-- then put postgresql://imgcheck_cache:PASSWORD@HOST:5432/imgcheck?sslmode=verify-full&sslrootcert=...
-- in the Secret's `cache-url` (CI runners that share the cache use the same role).
-- The table definitions are src/imgcheck/shared_cache.py's (_SCHEMA); imgcheck creates them itself only
-- when they are missing and its role may create tables.
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'imgcheck_cache') THEN
    CREATE ROLE imgcheck_cache LOGIN;
  END IF;
END $$;

CREATE TABLE IF NOT EXISTS imgcheck_cache (
    kind TEXT NOT NULL,
    namespace TEXT NOT NULL,
    key TEXT NOT NULL,
    value BYTEA NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (kind, namespace, key)
);
CREATE TABLE IF NOT EXISTS imgcheck_cache_claims (
    namespace TEXT NOT NULL,
    key TEXT NOT NULL,
    owner TEXT NOT NULL,
    lease_until TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (namespace, key)
);

REVOKE ALL ON imgcheck_cache, imgcheck_cache_claims FROM PUBLIC;
-- entries: read, add, and replace a damaged row (INSERT ... ON CONFLICT DO UPDATE); never delete
GRANT SELECT, INSERT, UPDATE ON imgcheck_cache TO imgcheck_cache;
-- in-flight claims on layers being read: taken, renewed and released
GRANT SELECT, INSERT, UPDATE, DELETE ON imgcheck_cache_claims TO imgcheck_cache;
DO $$ BEGIN
  EXECUTE format('GRANT CONNECT ON DATABASE %I TO imgcheck_cache', current_database());
END $$;
