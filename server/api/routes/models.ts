import type { Route } from '../define';

export const modelRoutes: Route[] = [];
