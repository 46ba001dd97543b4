import { serveDownload } from '@/server/api/downloads';

export const dynamic = 'force-dynamic';

type Context = { params: Promise<{ file: string }> };

export async function GET(request: Request, context: Context): Promise<Response> {
  return serveDownload(request, (await context.params).file);
}

export async function HEAD(request: Request, context: Context): Promise<Response> {
  return serveDownload(request, (await context.params).file);
}
