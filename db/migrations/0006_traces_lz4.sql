-- Span content and metadata compress with lz4 (several times faster than the default pglz on the
-- ingestion path). Servers built without lz4 (and PGlite) keep their default.
DO $$
BEGIN
  ALTER TABLE spans ALTER COLUMN content_json SET COMPRESSION lz4, ALTER COLUMN metadata_json SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
  RAISE NOTICE 'lz4 is not available; span content keeps the default compression';
END $$;
