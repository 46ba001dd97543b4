import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import postgres from 'postgres';

// Baseline (b) of `npm run bench -- retrieval`: a bare node:http handler doing the same indexed
// key → label → version lookup with postgres-js (one prepared statement, content included, the
// body serialized every time), with no strict parsing, ETag, activity or error envelope.
// Started as its own process by bench/retrieval.ts: PORT and DATABASE_URL from the environment.

const sql = postgres(process.env.DATABASE_URL!, { max: 10, onnotice: () => {} });
const prefix = '/api/v1/prompts/';

const server = createServer(async (req, res) => {
  try {
    const url = req.url ?? '/';
    const promptId = url.slice(prefix.length).split('?')[0];
    const secret = (req.headers.authorization ?? '').slice('Bearer '.length);
    const digest = createHash('sha256').update(secret).digest('hex');
    const [row] = await sql`
      select k.prompt_id, p.name, v.id, v.number, v.content, v.created_at
      from retrieval_keys k
      join prompts p on p.id = k.prompt_id
      join prompt_labels l on l.prompt_id = k.prompt_id and l.label = 'production'
      join prompt_versions v on v.id = l.version_id
      where k.secret_digest = ${digest} and k.revoked_at is null and k.prompt_id = ${promptId}`;
    if (!row) {
      res.writeHead(401).end();
      return;
    }
    const body = JSON.stringify({
      promptId: row.prompt_id,
      name: row.name,
      versionId: row.id,
      version: row.number,
      label: 'production',
      content: row.content,
      createdAt: (row.created_at as Date).toISOString(),
    });
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  } catch {
    res.writeHead(503).end();
  }
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => void sql.end({ timeout: 2 }).finally(() => process.exit(0))));
