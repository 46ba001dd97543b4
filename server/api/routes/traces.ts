import type { Route } from '../define';

export const traceRoutes: Route[] = [];
