import { dispatch } from '@/server/api/router';

export const dynamic = 'force-dynamic';

const handler = (request: Request) => dispatch(request);
export {
  handler as GET,
  handler as HEAD,
  handler as POST,
  handler as PUT,
  handler as PATCH,
  handler as DELETE,
  handler as OPTIONS,
};
