import { Card } from '@/components/ui/Card';

export type ConsentProps = {
  clientName: string;
  clientId: string;
  builtIn: boolean;
  redirectHost: string;
  resourceLabel: string;
  signedInAs: string;
  // The authorization request's parameters and the anti-forgery token, posted back as they are.
  fields: [string, string][];
};

// The consent page: the h1 is the client's name; Allow and Deny post the decision to /oauth/authorize.
export function ConsentCard({
  clientName,
  clientId,
  builtIn,
  redirectHost,
  resourceLabel,
  signedInAs,
  fields,
}: ConsentProps) {
  return (
    <Card className="auth-card">
      <div className="auth-heading">
        <p className="muted" style={{ margin: 0 }}>
          Authorize application
        </p>
        <h1>{clientName}</h1>
        <p className="muted">wants to use your Promptloop account{signedInAs ? ` (${signedInAs})` : ''}.</p>
      </div>
      <div className="form">
        <div>
          <p style={{ fontWeight: 600, margin: '0 0 6px' }}>It will be able to</p>
          <ul style={{ margin: 0, paddingLeft: 20, lineHeight: 1.6 }}>
            <li>
              read and change prompts, datasets, evaluations and keys in the organizations you belong to, with your role
              there
            </li>
            <li>start evaluations, which can use your organization&apos;s evaluation credits</li>
            <li>act through {resourceLabel}, for up to an hour at a time, renewed until you revoke it</li>
          </ul>
        </div>
        <p className="field-hint" style={{ margin: 0 }}>
          {builtIn
            ? 'Published by Promptloop.'
            : `Registered by its developer, not reviewed by Promptloop (client ${clientId}).`}{' '}
          After you choose, you return to <strong>{redirectHost}</strong>. You can revoke access any time under
          Authorized applications, in the sidebar of the dashboard.
        </p>
        <form method="post" action="/oauth/authorize" className="inline" style={{ gap: 12 }}>
          {fields.map(([name, value]) => (
            <input key={name} type="hidden" name={name} value={value} />
          ))}
          <button type="submit" name="decision" value="deny" className="btn" style={{ flex: 1 }}>
            Deny
          </button>
          <button type="submit" name="decision" value="allow" className="btn btn-primary" style={{ flex: 1 }}>
            Allow
          </button>
        </form>
      </div>
    </Card>
  );
}
