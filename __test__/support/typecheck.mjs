// `node __test__/support/typecheck.mjs <dir>`: compiles the TypeScript project of <dir> (its
// tsconfig.json) as `tsc -p` does, and prints the errors of the project's own files and of
// context-compact's declarations (node_modules/context-compact), in the format of
// `tsc --pretty false`; exits 1 when there is one. Other packages' declarations are not checked
// (as with skipLibCheck), so that the errors of a framework's own declarations under
// `exactOptionalPropertyTypes` do not hide or stand for ours. Used by module-resolution.test.ts.

import ts from 'typescript'

const dir = process.argv[2]
const host = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => dir, getNewLine: () => '\n' }
const fail = (diagnostics) => {
  process.stdout.write(ts.formatDiagnostics(diagnostics, host))
  process.exit(diagnostics.length > 0 ? 1 : 0)
}

const configPath = ts.findConfigFile(dir, ts.sys.fileExists)
if (!configPath) {
  console.error(`no tsconfig.json in ${dir}`)
  process.exit(2)
}
const config = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => fail([d]) })
if (config.errors.length > 0) fail(config.errors)
const program = ts.createProgram({ rootNames: config.fileNames, options: config.options })

/** The project's files and this package's declarations; not the other packages', nor TypeScript's libs. */
const checked = (file) => !/[\\/]node_modules[\\/]/.test(file.fileName) || /[\\/]node_modules[\\/]context-compact[\\/]/.test(file.fileName)

const diagnostics = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()]
for (const file of program.getSourceFiles()) {
  if (!checked(file)) continue
  diagnostics.push(...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file))
}
// The project's files were compiled: tsc would say so if its `include` matched nothing.
if (!program.getSourceFiles().some((f) => !/[\\/]node_modules[\\/]/.test(f.fileName))) {
  console.error(`no source file in ${dir}`)
  process.exit(2)
}
fail(diagnostics)
