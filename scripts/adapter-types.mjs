#!/usr/bin/env node
// The adapters' declarations for each module system, generated from the one file each adapter's
// types are written in (adapters/<name>/index.d.ts: the file to edit; run `npm run build:types` after). Where they are is read from
// package.json "exports" (the `types` of its `import` and `require` conditions):
// - adapters/<name>/index.d.mts, what package.json "exports" gives `import`: TypeScript reads it as an
//   ES module, so the frameworks' types it imports are their ES module declarations;
// - adapters/<name>/index.d.cts, what it gives `require`: read as CommonJS, so they are the frameworks'
//   CommonJS declarations.
// A project's own imports of a framework get the same declarations as the adapter's then. This
// matters where a framework ships one set per module system (LangChain: index.d.ts and
// index.d.cts): a middleware typed with the other set is "not assignable" to the project's own.
//
// `node scripts/adapter-types.mjs --check` writes nothing and fails when a generated file is not
// what the sources give (__test__/package/module-resolution.test.ts runs it).

import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

import ts from 'typescript'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const EXPORTS = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).exports
/** The adapters: the subpaths of package.json `exports` other than the package and its package.json. */
export const ADAPTERS = Object.keys(EXPORTS)
  .filter((subpath) => subpath !== '.' && subpath !== './package.json')
  .map((subpath) => subpath.slice(2))

/**
 * The files of one adapter, relative to the package root, as package.json `exports` names them:
 * `cjs` and `esm` (what `require` and `import` load), `cts` and `mts` (their declarations), and
 * `source`, the declarations they are generated from (beside them, `.d.ts`).
 * @param {string} name the adapter (`langchain`)
 */
export function adapterFiles(name) {
  const entry = EXPORTS[`./${name}`]
  const file = (path) => path.replace(/^\.\//, '')
  const mts = file(entry.import.types)
  return { cjs: file(entry.require.default), esm: file(entry.import.default), cts: file(entry.require.types), mts, source: mts.replace(/\.d\.mts$/, '.d.ts') }
}

// Frameworks whose types are one file for both module systems, and an ES module in some versions:
// the AI SDK (5 and 6: one CommonJS declaration file; 7: an ES module only, no `require` export),
// and pi-agent-core (an ES module only).
// The CommonJS variant imports them with `resolution-mode: 'import'`, which gives every project the
// same file (the `types` condition comes first for both) and is the only way a CommonJS
// declaration may import an ES module's types under `node16` (TS1541). Mastra (`@mastra/core`,
// a `"type": "module"` package) gives both conditions the same `.d.ts` files, ES modules too.
// Never list a framework with a declaration set per module system here: that would give a
// CommonJS project the ES set.
export const IMPORT_MODE = new Set(['ai', '@earendil-works/pi-agent-core', '@mastra/core'])

/** Whether a module specifier is relative (`./x`, `../index`). */
const isRelative = (specifier) => specifier.startsWith('./') || specifier.startsWith('../')

/**
 * The `.d.mts` and `.d.cts` texts of one adapter.
 * @param {string} name the adapter (`langchain`)
 * @param {string} source the text of adapters/<name>/index.d.ts
 * @param {boolean} esmDefault whether adapters/<name>/index.mjs has a default export
 * @param {string} sourcePath where `source` is, as the generated files name it
 * @returns {{ mts: string, cts: string }}
 */
export function variants(name, source, esmDefault, sourcePath = `adapters/${name}.d.ts`) {
  const file = ts.createSourceFile(`${name}.d.ts`, source, ts.ScriptTarget.Latest, true)
  /** @type {Array<{ at: number, text: string, only: 'mts' | 'cts' | null }>} */
  const edits = []
  const values = []
  for (const statement of file.statements) {
    const specifier =
      (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)
        ? statement.moduleSpecifier
        : null
    if (specifier) {
      const target = specifier.text
      // ES modules name the file: `../index` becomes `../index.js` (index.d.ts for TypeScript),
      // which CommonJS resolves as well.
      if (isRelative(target) && !/\.[cm]?js$/.test(target)) edits.push({ at: specifier.getEnd() - 1, text: '.js', only: null })
      const packageName = target.startsWith('@') ? target.split('/').slice(0, 2).join('/') : target.split('/')[0]
      if (!isRelative(target) && IMPORT_MODE.has(packageName)) {
        const typeOnly = ts.isImportDeclaration(statement) ? statement.importClause?.isTypeOnly : statement.isTypeOnly
        if (!typeOnly) throw new Error(`${sourcePath}: the import of '${target}' must be \`import type\` (it gets resolution-mode in the .d.cts)`)
        if (statement.attributes) throw new Error(`${sourcePath}: the import of '${target}' has attributes already`)
        edits.push({ at: specifier.getEnd(), text: " with { 'resolution-mode': 'import' }", only: 'cts' })
      }
    }
    const exported = ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
    if (exported && (ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement)) && statement.name) values.push(statement.name.text)
    if (exported && ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) if (ts.isIdentifier(declaration.name)) values.push(declaration.name.text)
    }
  }
  // `import('…')` types anywhere in the file would escape the edits above.
  const visit = (node) => {
    if (ts.isImportTypeNode(node)) throw new Error(`${sourcePath}: write an import declaration instead of import('…') (line ${file.getLineAndCharacterOfPosition(node.getStart()).line + 1})`)
    ts.forEachChild(node, visit)
  }
  visit(file)

  const apply = (kind) => {
    let text = source
    for (const edit of [...edits].sort((a, b) => b.at - a.at)) {
      if (edit.only === null || edit.only === kind) text = text.slice(0, edit.at) + edit.text + text.slice(edit.at)
    }
    return text
  }
  const header = (kind) =>
    `// Generated from ${sourcePath} by scripts/adapter-types.mjs (npm run build:types): edit that file.\n` +
    `// The declarations ${kind === 'mts' ? '`import` gets (an ES module)' : '`require` gets (CommonJS)'}.\n\n`
  let mts = header('mts') + apply('mts')
  if (esmDefault) {
    // adapters/<name>/index.mjs also exports the CommonJS module's exports object as its default.
    const names = [...new Set(values)]
    mts +=
      `\n/** The default export of the ES module: the same exports, as one object. */\n` +
      `declare const _default: {\n${names.map((n) => `  ${n}: typeof ${n}\n`).join('')}}\n` +
      `export default _default\n`
  }
  const cts = header('cts') + apply('cts')
  return { mts, cts }
}

/** Every generated file with the text the sources give. */
export function generated(root = ROOT) {
  const files = []
  for (const name of ADAPTERS) {
    const paths = adapterFiles(name)
    const source = readFileSync(join(root, paths.source), 'utf8')
    const esm = readFileSync(join(root, paths.esm), 'utf8')
    const { mts, cts } = variants(name, source, /^export default\b/m.test(esm), paths.source)
    files.push({ path: paths.mts, text: mts }, { path: paths.cts, text: cts })
  }
  return files
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const check = process.argv.includes('--check')
  const stale = []
  for (const { path, text } of generated()) {
    const full = join(ROOT, path)
    const current = existsSync(full) ? readFileSync(full, 'utf8') : null
    if (current === text) continue
    if (check) stale.push(path)
    else writeFileSync(full, text)
  }
  if (stale.length > 0) {
    console.error(`Not what the adapters' .d.ts give: ${stale.join(', ')}. Run \`npm run build:types\` and commit them.`)
    process.exit(1)
  }
}
