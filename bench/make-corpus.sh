#!/usr/bin/env bash
# Builds a realistic benchmark tree from pinned npm packages: a git repository whose tracked
# part is real library source (~18k files) beside a large, gitignored node_modules (~80k
# files), with nested .gitignore/.ignore files, hidden folders, build output, a symlink, CRLF
# and binary files. Needs the npm registry; takes one to three minutes.
#
#   make-corpus.sh DIR        build the tree in DIR (must not exist or be empty)
#
# The packages named are pinned exactly (their own dependencies follow the registry's state),
# and the one binary blob is random bytes: file counts and sources repeat, bytes may not.
# `npm run bench` runs this into bench/.corpus when that is missing.
set -euo pipefail

dir=${1:?usage: make-corpus.sh DIR}
mkdir -p "$dir"
cd "$dir"
if [ -n "$(ls -A .)" ]; then
  echo "make-corpus: $dir is not empty" >&2
  exit 2
fi

cat > package.json <<'EOF'
{
  "name": "freshfs-bench-corpus",
  "private": true,
  "dependencies": {
    "@angular/core": "21.2.26",
    "@babel/core": "7.29.13",
    "@babel/preset-env": "7.29.14",
    "@mui/icons-material": "9.5.0",
    "@mui/material": "9.5.0",
    "@types/node": "26.6.7",
    "aws-sdk": "2.1693.0",
    "core-js": "3.51.0",
    "date-fns": "4.4.0",
    "eslint": "10.15.0",
    "lodash": "4.18.1",
    "prettier": "3.10.1",
    "react": "19.3.1",
    "react-dom": "19.3.1",
    "rollup": "4.68.8",
    "rxjs": "7.8.2",
    "webpack": "5.113.0"
  }
}
EOF
npm install --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null

# The tracked part: real source trees, laid out like a monorepo.
mkdir -p packages
for pkg in rxjs date-fns core-js @mui/material lodash eslint aws-sdk; do
  name=${pkg#@mui/}
  cp -R "node_modules/$pkg" "packages/$name"
done

# Build output and caches that a repository ignores.
mkdir -p packages/rxjs/build/cache .cache/tool coverage/lcov
cp -R node_modules/rxjs/dist/cjs packages/rxjs/build/
for i in $(seq 1 200); do echo "cache entry $i" > ".cache/tool/entry-$i.bin"; done
for i in $(seq 1 50); do echo "TN:$i" > "coverage/lcov/report-$i.info"; done
for i in $(seq 1 20); do echo "log line $i" > "packages/eslint/debug-$i.log"; done
echo "kept on purpose" > packages/eslint/keep.log

# Hidden folders with content a user does care about.
mkdir -p .github/workflows .vscode
printf 'name: ci\non: push\njobs: {}\n' > .github/workflows/ci.yml
printf '{ "editor.tabSize": 2 }\n' > .vscode/settings.json
printf 'export const secret = "not really";\n' > packages/lodash/.hidden-helper.js

# Ignore files at several levels, including negation, anchoring and directory-only rules.
cat > .gitignore <<'EOF'
node_modules/
/coverage
.cache/
*.log
!keep.log
**/build/
*.tsbuildinfo
EOF
cat > packages/date-fns/.gitignore <<'EOF'
# locale bundles are generated
/locale/*/cdn.*
*.d.cts
EOF
cat > packages/core-js/.gitignore <<'EOF'
/stage/
/proposals/**/*.js
!/proposals/array-grouping*.js
EOF
printf 'docs/\n' > packages/material/.ignore

# Odd but real files: CRLF text, binary, a symlink, a large single-line file.
printf 'line one\r\nline two\r\nTODO: crlf\r\n' > packages/crlf-notes.txt
head -c 65536 /dev/urandom > packages/blob.bin
printf '\x89PNG\r\n\x1a\n\0\0\0\rIHDR' > packages/logo.png
ln -s packages/lodash lodash-link
cp node_modules/react-dom/cjs/react-dom-client.production.js packages/react-dom.min.js 2>/dev/null || true

git init -q
git add -A
git -c user.name=bench -c user.email=bench@localhost commit -qm corpus
tracked=$(git ls-files | wc -l)
total=$(find . -path ./.git -prune -o -type f -print | wc -l)
echo "corpus ready: $dir ($tracked tracked files, $total files in all)"
