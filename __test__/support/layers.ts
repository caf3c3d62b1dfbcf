// The import graphs the layering test checks (issue 20: "no import circle between layers, and a
// test that fails on one"), read from the sources themselves:
// - the JS layer: `require('./…')` / `require('../…')` between index.js, lib/, cli/ and adapters/,
//   and the same between the folders of lib/ (`folderGraph`);
// - the Rust core: which top-level modules of crates/core/src (a file or a folder directly
//   under it; `lib` is the crate root and is left out) name which others, through
//   `crate::name` (and `super::name` where that reaches the crate root), test code left out.
// Both give a Graph; `cyclesOf` finds its circles.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { basename, dirname, extname, join, relative, resolve } from 'node:path'

/** from → to → where the edge was seen (`file:line`, the first occurrence). */
export type Graph = Map<string, Map<string, string>>

function addEdge(graph: Graph, from: string, to: string, where: string) {
  if (from === to) return
  if (!graph.has(from)) graph.set(from, new Map())
  const edges = graph.get(from)!
  if (!edges.has(to)) edges.set(to, where)
}

function lineAt(text: string, offset: number): number {
  let line = 1
  for (let i = 0; i < offset; i++) if (text.charCodeAt(i) === 10) line += 1
  return line
}

function filesUnder(dir: string, ext: string): string[] {
  if (!existsSync(dir)) return []
  const out: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...filesUnder(path, ext))
    else if (entry.isFile() && entry.name.endsWith(ext)) out.push(path)
  }
  return out.sort()
}

// ------------------------------------------------------------------------------------------
// JS

/** The JS files of the layer: the entry files given, and every .js under the folders given. */
export function jsFiles(root: string, entries: string[], folders: string[]): string[] {
  const files = entries.map((file) => join(root, file)).filter((file) => existsSync(file))
  for (const folder of folders) files.push(...filesUnder(join(root, folder), '.js'))
  return files
}

const REQUIRE = /\brequire\(\s*(['"])(\.\.?\/[^'"]*)\1\s*\)/g

// Node's resolution of a relative specifier, as far as these files use it.
function resolveRequire(from: string, specifier: string): string | null {
  const base = resolve(dirname(from), specifier)
  for (const candidate of [base, `${base}.js`, join(base, 'index.js')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate
  }
  return null
}

/**
 * The relative requires between `files` (names relative to `root`). Lines that are comments
 * (starting with `//`, `/*` or `*`) are skipped: a module's own comments may quote a require.
 * Requires of files outside the set (binding.js, package.json, node: modules) are not edges.
 */
export function jsRequireGraph(root: string, files: string[]): Graph {
  const graph: Graph = new Map()
  const set = new Set(files.map((file) => resolve(file)))
  for (const file of files) {
    const name = relative(root, file)
    graph.set(name, graph.get(name) ?? new Map())
    const lines = readFileSync(file, 'utf8').split('\n')
    lines.forEach((line, i) => {
      if (/^\s*(\/\/|\/\*|\*)/.test(line)) return
      for (const match of line.matchAll(REQUIRE)) {
        const target = resolveRequire(file, match[2])
        if (target !== null && set.has(target)) addEdge(graph, name, relative(root, target), `${name}:${i + 1}`)
      }
    })
  }
  return graph
}

/**
 * The graph of the folders directly under `dir` (e.g. `lib`): each file `dir/<folder>/…` becomes
 * the node `dir/<folder>`, and an edge between two files of different folders an edge between the
 * folders (where: the first file edge seen). Files elsewhere (a file directly in `dir`, index.js,
 * cli/) are left out, and so are edges inside a folder.
 */
export function folderGraph(graph: Graph, dir: string): Graph {
  const folderOf = (file: string): string | null => {
    const parts = file.split(/[\\/]/)
    return parts.length > 2 && parts[0] === dir ? `${dir}/${parts[1]}` : null
  }
  const folders: Graph = new Map()
  for (const [from, edges] of graph) {
    const source = folderOf(from)
    if (source === null) continue
    if (!folders.has(source)) folders.set(source, new Map())
    for (const [to, where] of edges) {
      const target = folderOf(to)
      if (target !== null) addEdge(folders, source, target, where)
    }
  }
  return folders
}

// ------------------------------------------------------------------------------------------
// Rust

/**
 * Rust source with comments, string and char literals blanked (each of their characters but
 * newlines becomes a space, so offsets and line numbers stay), so that `crate::` in a doc
 * comment or a string is not taken for a path.
 */
export function rustCode(source: string): string {
  const chars = Array.from(source)
  const out = chars.slice()
  const blank = (from: number, to: number) => {
    for (let k = from; k < to && k < out.length; k++) if (out[k] !== '\n') out[k] = ' '
  }
  let i = 0
  while (i < chars.length) {
    const c = chars[i]
    const next = chars[i + 1]
    if (c === '/' && next === '/') {
      let j = i
      while (j < chars.length && chars[j] !== '\n') j++
      blank(i, j)
      i = j
    } else if (c === '/' && next === '*') {
      // Block comments nest in Rust.
      let depth = 0
      let j = i
      while (j < chars.length) {
        if (chars[j] === '/' && chars[j + 1] === '*') {
          depth++
          j += 2
        } else if (chars[j] === '*' && chars[j + 1] === '/') {
          depth--
          j += 2
          if (depth === 0) break
        } else j++
      }
      blank(i, j)
      i = j
    } else if ((c === 'r' || (c === 'b' && next === 'r')) && !/[A-Za-z0-9_]/.test(chars[i - 1] ?? ' ')) {
      // A raw string r"…", r#"…"#, br#"…"# (or just an identifier starting with r).
      let j = c === 'b' ? i + 2 : i + 1
      let hashes = 0
      while (chars[j] === '#') {
        hashes++
        j++
      }
      if (chars[j] !== '"') {
        i++
        continue
      }
      j++
      const close = '"' + '#'.repeat(hashes)
      while (j < chars.length && chars.slice(j, j + close.length).join('') !== close) j++
      j += close.length
      blank(i, j)
      i = j
    } else if (c === '"') {
      let j = i + 1
      while (j < chars.length && chars[j] !== '"') j += chars[j] === '\\' ? 2 : 1
      blank(i, j + 1)
      i = j + 1
    } else if (c === "'") {
      // A char literal ('a', '\n', '\u{1F600}') or a lifetime ('a, 'static): only the first
      // is blanked.
      if (next === '\\') {
        let j = i + 3
        while (j < chars.length && chars[j] !== "'") j++
        blank(i, j + 1)
        i = j + 1
      } else if (chars[i + 2] === "'") {
        blank(i, i + 3)
        i += 3
      } else i++
    } else i++
  }
  return out.join('')
}

const CFG_TEST = /#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]/g
const EXTERNAL_MOD = /^\s*(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+([A-Za-z_][A-Za-z0-9_]*)\s*;/

/**
 * The code of a file without its test code: a `#[cfg(test)] mod name;` declaration is removed
 * (its file is test code: returned in `testModules`), and any other `#[cfg(test)]` starts the
 * test section, which runs to the end of the file.
 */
export function withoutTests(code: string): { code: string; testModules: string[] } {
  const testModules: string[] = []
  let out = code
  CFG_TEST.lastIndex = 0
  for (;;) {
    const match = CFG_TEST.exec(out)
    if (!match) break
    const after = out.slice(match.index + match[0].length)
    const external = EXTERNAL_MOD.exec(after)
    if (external) {
      testModules.push(external[1])
      const end = match.index + match[0].length + external[0].length
      out = out.slice(0, match.index) + out.slice(match.index, end).replace(/[^\n]/g, ' ') + out.slice(end)
      CFG_TEST.lastIndex = end
      continue
    }
    out = out.slice(0, match.index) + out.slice(match.index).replace(/[^\n]/g, ' ')
    break
  }
  return { code: out, testModules }
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/

// The first segment of each path in a `{ … }` group: `{a::X, b, c::{d, e}}` → a, b, c.
function groupHeads(group: string): string[] {
  const heads: string[] = []
  let depth = 0
  let item = ''
  for (const ch of group) {
    if (ch === '{') depth++
    if (ch === '}') depth--
    if (ch === ',' && depth === 0) {
      heads.push(item)
      item = ''
    } else item += ch
  }
  heads.push(item)
  return heads.map((head) => head.trim().split(/\s*::\s*|\s+/)[0]).filter((head) => IDENT.test(head) && head !== 'self')
}

// The text of the `{ … }` group that starts at `open` (the brace's offset).
function braceGroup(code: string, open: number): string {
  let depth = 0
  for (let j = open; j < code.length; j++) {
    if (code[j] === '{') depth++
    else if (code[j] === '}') {
      depth--
      if (depth === 0) return code.slice(open + 1, j)
    }
  }
  return code.slice(open + 1)
}

/**
 * Which crate-root names a file refers to, with their offsets: `crate::name`, `crate::{a, b}`
 * and, from a file `depth` modules below the root, `super::` repeated `depth` times.
 */
function rootReferences(code: string, depth: number): Array<{ name: string; offset: number }> {
  const refs: Array<{ name: string; offset: number }> = []
  const superPath = depth > 0 ? Array(depth).fill('super').join('\\s*::\\s*') : null
  const root = new RegExp(`(?<![A-Za-z0-9_])(?:\\$?crate${superPath ? `|(?<!super\\s*::\\s*)${superPath}` : ''})\\s*::\\s*(\\{|[A-Za-z_][A-Za-z0-9_]*)`, 'g')
  for (const match of code.matchAll(root)) {
    const offset = match.index!
    if (match[1] === '{') {
      const open = offset + match[0].length - 1
      for (const name of groupHeads(braceGroup(code, open))) refs.push({ name, offset })
    } else if (match[1] !== 'super' && match[1] !== 'self') {
      refs.push({ name: match[1], offset })
    }
  }
  return refs
}

/** The top-level modules of a crate's `src`: each `name.rs` and folder `name/` (`lib`, `main` left out). */
export function rustTopLevelModules(srcDir: string): string[] {
  const names = new Set<string>()
  for (const entry of readdirSync(srcDir, { withFileTypes: true })) {
    if (entry.isDirectory()) names.add(entry.name)
    else if (entry.isFile() && extname(entry.name) === '.rs') names.add(basename(entry.name, '.rs'))
  }
  names.delete('lib')
  names.delete('main')
  return [...names].sort()
}

// A file's module depth below the crate root: `a.rs`, `a/mod.rs` → 1; `a/b.rs` → 2.
function moduleDepth(srcDir: string, file: string): number {
  const parts = relative(srcDir, file).split(/[\\/]/)
  return basename(file) === 'mod.rs' ? parts.length - 1 : parts.length
}

// The folder that holds a file's child modules: `a/mod.rs` → a/, `a/b.rs` → a/b/.
function childDir(file: string): string {
  return basename(file) === 'mod.rs' ? dirname(file) : join(dirname(file), basename(file, '.rs'))
}

/**
 * The graph of a crate's top-level modules (names), an edge where a non-test file of one names
 * another. Files that a `#[cfg(test)] mod name;` declares are test code and not read.
 */
export function rustModuleGraph(srcDir: string): Graph {
  const graph: Graph = new Map()
  const modules = rustTopLevelModules(srcDir)
  const known = new Set(modules)
  for (const module of modules) {
    graph.set(module, new Map())
    // The module's own file first (`name.rs` or `name/mod.rs`), then its submodules.
    const own = [join(srcDir, `${module}.rs`), join(srcDir, module, 'mod.rs')]
    const files = [...own, ...filesUnder(join(srcDir, module), '.rs').filter((file) => !own.includes(file))].filter((file) => existsSync(file))
    // First which files are test modules, then the references of the others.
    const read = files.map((file) => ({ file, ...withoutTests(rustCode(readFileSync(file, 'utf8'))) }))
    const testFiles = new Set<string>()
    for (const { file, testModules } of read) {
      for (const name of testModules) {
        const dir = childDir(file)
        testFiles.add(join(dir, `${name}.rs`))
        testFiles.add(join(dir, name))
      }
    }
    const isTest = (file: string) => testFiles.has(file) || [...testFiles].some((dir) => file.startsWith(dir + '/'))
    for (const { file, code } of read) {
      if (isTest(file)) continue
      for (const { name, offset } of rootReferences(code, moduleDepth(srcDir, file))) {
        if (known.has(name)) addEdge(graph, module, name, `${relative(srcDir, file)}:${lineAt(code, offset)}`)
      }
    }
  }
  return graph
}

// ------------------------------------------------------------------------------------------
// Cycles

/**
 * One circle of a graph: `nodes` are a strongly connected component of more than one node
 * (each reaches every other), `path` one circle through the first of them, which starts and
 * ends at it, each step with where it was seen.
 */
export type Cycle = { nodes: string[]; path: string[] }

/** The circles of a graph, one per strongly connected component; empty when it is a DAG. */
export function cyclesOf(graph: Graph): Cycle[] {
  const nodes = new Set<string>(graph.keys())
  for (const edges of graph.values()) for (const to of edges.keys()) nodes.add(to)
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const onStack = new Set<string>()
  const stack: string[] = []
  const components: string[][] = []
  let counter = 0
  // Tarjan's algorithm (recursive: these graphs have a few dozen nodes).
  const visit = (node: string) => {
    index.set(node, counter)
    low.set(node, counter)
    counter++
    stack.push(node)
    onStack.add(node)
    for (const to of graph.get(node)?.keys() ?? []) {
      if (!index.has(to)) {
        visit(to)
        low.set(node, Math.min(low.get(node)!, low.get(to)!))
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!))
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== node)
      if (component.length > 1) components.push(component.sort())
    }
  }
  for (const node of [...nodes].sort()) if (!index.has(node)) visit(node)
  return components.map((nodes) => ({ nodes, path: circleThrough(graph, nodes) }))
}

// A shortest path from the component's first node back to it, inside the component.
function circleThrough(graph: Graph, component: string[]): string[] {
  const members = new Set(component)
  const start = component[0]
  const previous = new Map<string, string>()
  const queue = [start]
  while (queue.length > 0) {
    const node = queue.shift()!
    for (const to of graph.get(node)?.keys() ?? []) {
      if (!members.has(to)) continue
      if (to === start) {
        const path = [node]
        while (path[0] !== start) path.unshift(previous.get(path[0])!)
        path.push(start)
        return path.map((step, i) => (i + 1 < path.length ? `${step} (${graph.get(step)!.get(path[i + 1])})` : step))
      }
      if (!previous.has(to) && to !== start) {
        previous.set(to, node)
        queue.push(to)
      }
    }
  }
  return component
}

/** One line per circle, for a failure message. */
export function describeCycles(cycles: Cycle[]): string {
  return cycles.map(({ nodes, path }) => `${nodes.length} in a circle (${nodes.join(', ')}), e.g. ${path.join(' → ')}`).join('\n')
}
