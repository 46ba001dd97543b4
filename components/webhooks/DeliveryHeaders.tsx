import { deliveryHeaders } from './snippets';

// The headers every delivery carries (Standard Webhooks), for whoever writes the receiver.
export function DeliveryHeaders() {
  return (
    <div className="stack-sm">
      <strong>Headers on every delivery</strong>
      <dl className="webhook-headers">
        {deliveryHeaders.map((header) => (
          <div key={header.name}>
            <dt>
              <code>{header.name}</code>
            </dt>
            <dd>{header.value}</dd>
          </div>
        ))}
      </dl>
    </div>
  );
}
