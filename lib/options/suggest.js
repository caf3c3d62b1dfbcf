'use strict'

// The edit distance behind "did you mean …?": the library's warning for an unknown option
// (options.js) and the CLI's for an unknown flag (cli/args.js). Plain JS, no addon: the CLI
// suggests a flag before it loads the library.

/** The Levenshtein distance of two strings (insertions, deletions and substitutions of one character), case-sensitive. */
function editDistance(a, b) {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]
      row[j] = Math.min(above + 1, row[j - 1] + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1))
      diagonal = above
    }
  }
  return row[b.length]
}

module.exports = { editDistance }
