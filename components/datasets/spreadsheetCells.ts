// Spreadsheets run a cell that starts with = + - @ (or a tab or carriage return) as a formula, and
// dataset cases can hold end users' text (a case from a production span). The CSV export writes such
// a value with a leading apostrophe, which spreadsheets show as text; the importer removes it again.
// Values that already start with apostrophes before such a character get one more, so the round trip
// never changes a case.
const formulaLike = /^'*[=+\-@\t\r]/;

export function toSpreadsheetCell(value: string): string {
  return formulaLike.test(value) ? `'${value}` : value;
}

export function fromSpreadsheetCell(value: string): string {
  return value.startsWith("'") && formulaLike.test(value) ? value.slice(1) : value;
}
