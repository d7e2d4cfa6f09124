/** Rows as aligned columns for the CLI's tables (`workers`, `suites list`); the last column is left unpadded (the longest). */
export function alignedTable(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => r[col]!.length)));
  return rows.map((r) => r.map((cell, col) => (col === r.length - 1 ? cell : cell.padEnd(widths[col]!))).join('  ').trimEnd()).join('\n') + '\n';
}
