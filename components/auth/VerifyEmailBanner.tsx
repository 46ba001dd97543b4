import { Alert } from '@/components/ui/Alert';
import { ResendVerificationButton } from './ResendVerificationButton';

// Shown above every dashboard page while the signed-in person's address is unconfirmed and
// verification is required.
export function VerifyEmailBanner({ email }: { email: string }) {
  return (
    <div className="verify-banner">
      <Alert tone="warning" title="Confirm your email address" action={<ResendVerificationButton />}>
        We sent a link to <strong>{email}</strong>. Until you open it, teammates cannot add you to their organizations.
      </Alert>
    </div>
  );
}
