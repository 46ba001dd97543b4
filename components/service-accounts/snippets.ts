import { cliInstallHint, cliTarballUrl } from '@/lib/install-hints';

// Copy-paste examples for a new service account: a token with client_credentials, then an API call;
// the CLI's environment variables; and the step of a GitHub Actions job.

export function curlSnippet(origin: string, clientId: string, clientSecret: string): string {
  return [
    '# 1. an access token (valid 1 hour): client_credentials with HTTP Basic',
    `ACCESS_TOKEN=$(curl -s -X POST '${origin}/oauth/token' \\`,
    `  -u '${clientId}:${clientSecret}' \\`,
    `  -d grant_type=client_credentials | sed -E 's/.*"access_token":"([^"]+)".*/\\1/')`,
    '',
    '# 2. call the management API as the service account',
    `curl -s '${origin}/api/v1/me' -H "Authorization: Bearer $ACCESS_TOKEN"`,
  ].join('\n');
}

export function cliSnippet(origin: string, clientId: string, clientSecret: string): string {
  return [
    cliInstallHint(origin),
    '# Every command gets its own token; no `promptloop login`, nothing is saved.',
    `export PROMPTLOOP_URL='${origin}'`,
    `export PROMPTLOOP_CLIENT_ID='${clientId}'`,
    `export PROMPTLOOP_CLIENT_SECRET='${clientSecret}'`,
    'promptloop orgs list',
  ].join('\n');
}

export function githubActionsSnippet(origin: string): string {
  return [
    '# Repository secrets: PROMPTLOOP_URL, PROMPTLOOP_CLIENT_ID, PROMPTLOOP_CLIENT_SECRET',
    '# The CLI from the server it talks to',
    `- run: npm install -g ${cliTarballUrl(origin)}`,
    '- name: Evaluation gate',
    '  env:',
    '    PROMPTLOOP_URL: ${{ secrets.PROMPTLOOP_URL }}',
    '    PROMPTLOOP_CLIENT_ID: ${{ secrets.PROMPTLOOP_CLIENT_ID }}',
    '    PROMPTLOOP_CLIENT_SECRET: ${{ secrets.PROMPTLOOP_CLIENT_SECRET }}',
    '  run: promptloop evals start "$PROMPT_ID" --version-id "$VERSION_ID" --scope quick --wait',
  ].join('\n');
}
