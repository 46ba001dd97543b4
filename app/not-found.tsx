import { ButtonLink } from '@/components/ui/Button';

export default function NotFound() {
  return (
    <main className="auth">
      <div className="auth-inner" style={{ textAlign: 'center' }}>
        <div className="stack-sm">
          <p className="subtle" style={{ fontWeight: 600 }}>
            404
          </p>
          <h1 style={{ fontSize: 22 }}>Page not found</h1>
          <p className="muted">The page you are looking for does not exist or has moved.</p>
        </div>
        <div>
          <ButtonLink href="/" variant="primary">
            Go to the dashboard
          </ButtonLink>
        </div>
      </div>
    </main>
  );
}
