// How many results a search or filter left, in a polite live region. It stays mounted while the list reloads (text
// put into a region that appears at the same moment is often not read); `count` is null while loading or unfiltered.
export function ResultCount({
  count,
  more = false,
  one,
  many,
  none,
}: {
  count: number | null;
  more?: boolean;
  one: string;
  many: string;
  none: string;
}) {
  const message = count === null ? '' : count === 0 ? none : `${count}${more ? '+' : ''} ${count === 1 ? one : many}`;
  return (
    <p role="status" className="visually-hidden">
      {message}
    </p>
  );
}
