import { config } from '../config';
import { managementScope } from './oauth';

// RFC 9728 metadata that the 401 challenge points to.
export function protectedResourceMetadata() {
  const cfg = config();
  return {
    resource: cfg.oauthAudience,
    authorization_servers: [cfg.oauthIssuer],
    scopes_supported: [managementScope],
    bearer_methods_supported: ['header'],
    resource_name: 'Promptloop management API',
  };
}
