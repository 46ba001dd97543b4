import { availableParallelism } from 'node:os';

// Configuration from the environment, read once per process (API.md "Configuration").
export type Config = {
  port: number;
  appUrl: string;
  databaseUrl: string | undefined;
  // A Postgres hot standby that retrieval reads (API.md "Scale settings"); writes that change what
  // retrieval returns wait up to retrievalStandbyWaitMs for it to apply them (docs/deploy.md).
  retrievalDatabaseUrl: string | undefined;
  retrievalStandbyWaitMs: number;
  // Retrieval answers kept in memory until a change (server/retrieval/answer-cache.ts): on unless
  // RETRIEVAL_CACHE=false; a process that stops renewing its lease is waited for at most this long.
  retrievalCache: boolean;
  retrievalCacheLeaseMs: number;
  oauthIssuer: string;
  oauthJwksUrl: string | undefined;
  oauthFetchTimeoutMs: number;
  oauthAudience: string;
  dataDir: string;
  managementRatePerMinute: number;
  ingestRatePerSecond: number;
  ingestKeyCacheMs: number;
  // Retrieval requests per second per key (token bucket, burst of two seconds); 0 turns the limit off.
  retrievalRatePerSecond: number;
  ingestProcesses: number;
  ingestDbConnections: number;
  // Account email (API.md "Accounts and email"): unset SMTP_URL → the outbox in .data/outbox.
  smtpUrl: string | undefined;
  emailFrom: string;
  requireEmailVerification: boolean;
  // Evaluation engine (README "Configuration"): cases in flight per organization and per model
  // route, the worker heartbeat (a claim is taken over after 3 missed beats), claims per case
  // before it is recorded as an error, and how often a worker looks for runs with no live job.
  evalConcurrencyPerOrg: number;
  evalConcurrencyPerRoute: number;
  evalWorkerHeartbeatMs: number;
  evalMaxAttempts: number;
  evalSweepMs: number;
  // Billing (API.md "Billing"): without a secret key, checkout and cancel renewal answer 503.
  stripeSecretKey: string | undefined;
  // Several comma-separated secrets are accepted while one is rotated out.
  stripeWebhookSecrets: string[];
  stripePricePro: string | undefined;
  stripeApiBase: string;
  // Evaluation credits per billing period (0 allowed: no evaluation can run).
  evalCreditsFree: number;
  evalCreditsPro: number;
  // Webhook targets (API.md "Scale settings"): http:// and private addresses for local development and tests.
  webhookAllowHttp: boolean;
  webhookAllowPrivate: boolean;
  // Days a trace is kept per plan (API.md "Scale settings"), 1–3650; server/traces/retention.ts.
  traceRetentionDays: { free: number; pro: number };
};

function flag(value: string | undefined, fallback: boolean): boolean {
  const v = value?.trim().toLowerCase();
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  return fallback;
}

// An integer setting of at least `min`; anything else (unset, empty, a fraction) keeps the default.
function intSetting(value: string | undefined, fallback: number, min = 1, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(value);
  return value !== undefined && value.trim() !== '' && Number.isInteger(n) && n >= min && n <= max ? n : fallback;
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

// The settings read from an environment (config() reads process.env once).
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = Number(env.PORT ?? 3000);
  const appUrl = trimSlash(env.APP_URL || `http://localhost:${port}`);
  return {
    port,
    appUrl,
    databaseUrl: env.DATABASE_URL || undefined,
    retrievalDatabaseUrl: env.RETRIEVAL_DATABASE_URL || undefined,
    retrievalStandbyWaitMs: intSetting(env.RETRIEVAL_STANDBY_WAIT_MS, 5000),
    retrievalCache: flag(env.RETRIEVAL_CACHE, true),
    retrievalCacheLeaseMs: Math.min(Math.max(intSetting(env.RETRIEVAL_CACHE_LEASE_MS, 1000), 100), 60_000),
    traceRetentionDays: {
      // 1–3650 days; anything else keeps the default (README), never a clamp: 5000 by mistake would
      // otherwise create ten years of weekly partitions.
      free: intSetting(env.TRACE_RETENTION_DAYS_FREE, 30, 1, 3650),
      pro: intSetting(env.TRACE_RETENTION_DAYS_PRO, 90, 1, 3650),
    },
    // Kept exactly as configured: `iss` must equal it, trailing slash and all (API.md "Input hygiene").
    oauthIssuer: env.OAUTH_ISSUER || appUrl,
    oauthJwksUrl: env.OAUTH_JWKS_URL || undefined,
    oauthFetchTimeoutMs: Number(env.OAUTH_FETCH_TIMEOUT_MS ?? 5000),
    oauthAudience: env.OAUTH_AUDIENCE || `${appUrl}/api/v1`,
    dataDir: env.PGLITE_DATA_DIR || './.data',
    managementRatePerMinute: Number(env.MANAGEMENT_RATE_LIMIT_PER_MINUTE ?? 600),
    ingestRatePerSecond: Number(env.INGEST_RATE_LIMIT_PER_SECOND ?? 500),
    ingestKeyCacheMs: Number(env.INGEST_KEY_CACHE_MS ?? 5000),
    retrievalRatePerSecond: Number(env.RETRIEVAL_RATE_LIMIT_PER_SECOND ?? 2000),
    ingestProcesses: Number(env.INGEST_PROCESSES ?? availableParallelism()),
    ingestDbConnections: intSetting(env.INGEST_DB_CONNECTIONS, 2),
    smtpUrl: env.SMTP_URL || undefined,
    emailFrom: env.EMAIL_FROM || 'Promptloop <no-reply@localhost>',
    requireEmailVerification: flag(env.REQUIRE_EMAIL_VERIFICATION, Boolean(env.SMTP_URL)),
    evalConcurrencyPerOrg: intSetting(env.EVAL_CONCURRENCY_PER_ORG, 8),
    evalConcurrencyPerRoute: intSetting(env.EVAL_CONCURRENCY_PER_ROUTE, 8),
    evalWorkerHeartbeatMs: intSetting(env.EVAL_WORKER_HEARTBEAT_MS, 2000),
    evalMaxAttempts: intSetting(env.EVAL_MAX_ATTEMPTS, 3),
    evalSweepMs: intSetting(env.EVAL_SWEEP_MS, 3000),
    stripeSecretKey: env.STRIPE_SECRET_KEY?.trim() || undefined,
    stripeWebhookSecrets: (env.STRIPE_WEBHOOK_SECRET ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    stripePricePro: env.STRIPE_PRICE_PRO?.trim() || undefined,
    stripeApiBase: trimSlash(env.STRIPE_API_BASE?.trim() || 'https://api.stripe.com'),
    evalCreditsFree: intSetting(env.EVAL_CREDITS_FREE, 200, 0),
    evalCreditsPro: intSetting(env.EVAL_CREDITS_PRO, 10000, 0),
    webhookAllowHttp: flag(env.WEBHOOK_ALLOW_HTTP, false),
    webhookAllowPrivate: flag(env.WEBHOOK_ALLOW_PRIVATE, false),
  };
}

let cached: Config | undefined;
// Whether this server can sell Pro at all (a Stripe key and the Pro price): without them plans never
// change, so nothing points people at an upgrade they cannot buy.
export function canSellPro(): boolean {
  const { stripeSecretKey, stripePricePro } = config();
  return Boolean(stripeSecretKey && stripePricePro);
}

export function config(): Config {
  cached ??= loadConfig();
  return cached;
}
