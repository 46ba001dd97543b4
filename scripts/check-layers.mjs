// `npm run check:layers`: the layering rules of DESIGN.md, checked on every import in the tree.
// - Services (server/** except the edges server/api, server/trpc, server/mcp and the process entry
//   server/main.ts) never import server/api, server/trpc, server/mcp, app/ or components/.
// - components/** import from server/ only schemas.ts files, and the router types of
//   server/trpc/root as a type-only import.
// Prints one line per violation (file, import, rule) and exits 1 when there is any.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sourceFile = /\.(ts|tsx|mts|js|mjs|jsx)$/;

function filesUnder(dir) {
  const out = [];
  let entries;
  try {
    entries = readdirSync(path.join(root, dir), { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...filesUnder(rel));
    else if (sourceFile.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

// Every module specifier in a file, with whether the import brings in types only.
function importsOf(file) {
  const text = readFileSync(path.join(root, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found = [];
  const visit = (node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : null;
      const typeOnly = Boolean(clause && (clause.isTypeOnly || (!clause.name && named && named.length > 0 && named.every((e) => e.isTypeOnly))));
      found.push({ specifier: node.moduleSpecifier.text, typeOnly, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && ts.isStringLiteral(node.moduleReference.expression)) {
      found.push({ specifier: node.moduleReference.expression.text, typeOnly: node.isTypeOnly, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
    } else if (ts.isCallExpression(node) && (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require'))) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteralLike(argument))
        found.push({ specifier: argument.text, typeOnly: false, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push({ specifier: node.argument.literal.text, typeOnly: true, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

// The import as a path from the repository root without extension ('server/api/http'), or null
// for packages and node built-ins.
function target(file, specifier) {
  let resolved;
  if (specifier.startsWith('@/')) resolved = specifier.slice(2);
  else if (specifier.startsWith('.')) resolved = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier));
  else return null;
  return resolved.replace(/\.(ts|tsx|mts|js|mjs|jsx)$/, '').replace(/\/index$/, '');
}

const within = (p, dir) => p === dir || p.startsWith(`${dir}/`);
const edges = ['server/api', 'server/trpc', 'server/mcp'];
const isService = (file) => within(file, 'server') && !edges.some((edge) => within(file, edge)) && file !== 'server/main.ts';
const forbiddenForServices = [...edges, 'app', 'components'];

export function violations() {
  const found = [];
  for (const file of [...filesUnder('server'), ...filesUnder('components')]) {
    for (const { specifier, typeOnly, line } of importsOf(file)) {
      const to = target(file, specifier);
      if (to === null) continue;
      if (isService(file)) {
        const layer = forbiddenForServices.find((dir) => within(to, dir));
        if (layer) found.push(`${file}:${line} imports '${specifier}' (${to}): services never import ${layer}/`);
      } else if (within(file, 'components') && within(to, 'server')) {
        const schemas = path.posix.basename(to) === 'schemas';
        const routerTypes = to === 'server/trpc/root' && typeOnly;
        if (!schemas && !routerTypes) {
          const why = to === 'server/trpc/root' ? 'router types must be a type-only import' : 'components import from server/ only schemas.ts files and router types';
          found.push(`${file}:${line} imports '${specifier}' (${to}): ${why}`);
        }
      }
    }
  }
  return found;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const found = violations();
  if (found.length) {
    console.error(`Layering violations (DESIGN.md "Layers", "Conventions"):\n${found.map((line) => `  ${line}`).join('\n')}`);
    process.exit(1);
  }
  console.log('layers: ok');
}
