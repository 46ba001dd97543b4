'use client';

import type { ReactNode } from 'react';
import { formatDate, formatRelative } from '@/components/format';
import { Badge } from './Badge';
import { Button } from './Button';
import { Table } from './Table';

// The fields every credential list shows (retrieval keys, ingestion keys, service accounts).
export type KeyRow = {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
};

export type KeyColumn<K> = { header: string; cell: (key: K) => ReactNode };

const prefixColumn: KeyColumn<KeyRow & { prefix?: string }> = {
  header: 'Key',
  cell: (key) => <code className="mono-sm">{key.prefix}…</code>,
};

// One table for a page of credentials: name, the kind's own columns, what identifies it (a key's
// prefix by default), created, last use, status and a Revoke button on active ones (when `onRevoke` is given).
export function KeyTable<K extends KeyRow>({
  caption,
  keys,
  columns = [],
  identifier = prefixColumn as KeyColumn<K>,
  onRevoke,
}: {
  caption: string;
  keys: K[];
  columns?: KeyColumn<K>[];
  identifier?: KeyColumn<K>;
  onRevoke?: (key: K) => void;
}) {
  return (
    <Table caption={caption} className="table-compact">
      <thead>
        <tr>
          <th scope="col">Name</th>
          {columns.map((column) => (
            <th scope="col" key={column.header}>
              {column.header}
            </th>
          ))}
          <th scope="col">{identifier.header}</th>
          <th scope="col">Created</th>
          <th scope="col">Last used</th>
          <th scope="col">Status</th>
          <th scope="col">
            <span className="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {keys.map((key) => (
          <tr key={key.id} data-key={key.id} className={key.revokedAt ? 'key-status-revoked' : undefined}>
            <td>
              <strong>{key.name}</strong>
            </td>
            {columns.map((column) => (
              <td key={column.header}>{column.cell(key)}</td>
            ))}
            <td className="cell-nowrap">{identifier.cell(key)}</td>
            <td className="cell-nowrap muted">{formatDate(key.createdAt)}</td>
            <td className="cell-nowrap muted" title={key.lastUsedAt ?? undefined}>
              {key.lastUsedAt ? formatRelative(key.lastUsedAt) : 'Never'}
            </td>
            <td>
              {key.revokedAt ? (
                <Badge title={`Revoked ${formatDate(key.revokedAt)}`}>Revoked</Badge>
              ) : (
                <Badge tone="success">Active</Badge>
              )}
            </td>
            <td className="cell-actions">
              {key.revokedAt || !onRevoke ? null : (
                <Button
                  size="sm"
                  variant="danger-outline"
                  onClick={() => onRevoke(key)}
                  aria-label={`Revoke ${key.name}`}
                >
                  Revoke
                </Button>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </Table>
  );
}
