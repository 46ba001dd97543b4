import { diffRows } from './diff';

// A unified line diff: removed lines in red, added in green, changed words marked inside a
// replaced line. `before`/`after` name the two sides for screen readers and the legend.
export function DiffView({
  before,
  after,
  beforeLabel,
  afterLabel,
  label,
}: {
  before: string;
  after: string;
  beforeLabel: string;
  afterLabel: string;
  label: string;
}) {
  if (before === after) {
    return (
      <div className="diff diff-same" role="group" aria-label={label}>
        <p className="diff-note">Identical</p>
        <pre className="diff-body">{after || <span className="subtle">(empty)</span>}</pre>
      </div>
    );
  }
  const rows = diffRows(before, after);
  return (
    <div className="diff" role="group" aria-label={label}>
      <p className="diff-legend">
        <span className="diff-key diff-key-removed">− {beforeLabel}</span>
        <span className="diff-key diff-key-added">+ {afterLabel}</span>
      </p>
      <div className="diff-body">
        {rows.map((row, index) => (
          <div key={index} className={`diff-line diff-${row.kind}`}>
            <span className="diff-sign" aria-hidden="true">
              {row.kind === 'added' ? '+' : row.kind === 'removed' ? '−' : ' '}
            </span>
            <span className="visually-hidden">
              {row.kind === 'added' ? `${afterLabel}: ` : row.kind === 'removed' ? `${beforeLabel}: ` : ''}
            </span>
            <span className="diff-text">
              {row.kind !== 'same' && row.words
                ? row.words.map((word, i) =>
                    word.kind === 'same' ? (
                      <span key={i}>{word.text}</span>
                    ) : (
                      <mark key={i} className="diff-word">
                        {word.text}
                      </mark>
                    ),
                  )
                : row.text || ' '}
            </span>
          </div>
        ))}
      </div>
    </div>
  );
}
