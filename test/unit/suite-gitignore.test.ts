/**
 * Ignore files read as git reads them (src/suites/gitignore.ts, through the
 * packer's walk): for each folder below, every file and folder is packed
 * exactly when `git check-ignore` (run on the same files in a git repository,
 * each `.runsetignore` appended to its folder's `.gitignore`, since git knows
 * only the one) says it is not ignored.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { walkSuite } from '../../src/suites/walk.js';
import { tempDir } from '../helpers/server.js';

const NO_GIT = spawnSync('git', ['--version']).status === 0 ? false : 'git is not installed';

/** A folder: files by path (a path ending in `/` is an empty folder). */
type Tree = Record<string, string>;

const CASES: Record<string, Tree> = {
  'build output git leaves out, brought back by .runsetignore !/dist (issue 43)': {
    '.gitignore': 'node_modules/\ndist/\n',
    '.runsetignore': '!/dist\n',
    'dist/index.html': 'x', 'dist/assets/app.js': 'x', 'src/dist/x': 'x', 'server.js': 'x',
  },
  'a file cannot be re-included when its folder is excluded': {
    '.gitignore': 'dist/\n!dist/index.html\nlogs\n!logs/keep.log\n',
    'dist/index.html': 'x', 'dist/a.js': 'x', 'logs/keep.log': 'x', 'logs/b.log': 'x',
  },
  'the contents excluded, one folder brought back': {
    '.gitignore': '/build/*\n!/build/keep/\nout/**\n!out/**/\n!out/**/*.txt\n',
    'build/a': 'x', 'build/keep/b': 'x', 'build/other/c': 'x', 'out/x.bin': 'x', 'out/d/y.txt': 'x', 'out/d/z.bin': 'x',
  },
  'folder-only patterns, basenames at any depth, anchored paths': {
    '.gitignore': 'foo/\ncache\n/top.txt\ndoc/*.txt\n',
    'foo': 'a file named foo', 'bar/foo/x': 'x', 'a/cache/y': 'x', 'a/cache.txt': 'x',
    'top.txt': 'x', 'a/top.txt': 'x', 'doc/a.txt': 'x', 'doc/sub/b.txt': 'x', 'doc/c.md': 'x',
  },
  'double stars: leading, inner and trailing, and ** inside a part': {
    '.gitignore': '**/tmp\na/**/z\nlogs/**\nx**y\n',
    'tmp/1': 'x', 'p/q/tmp/2': 'x', 'a/z': 'x', 'a/b/c/z': 'x', 'b/a/z': 'x', 'logs/l': 'x', 'logs/d/m': 'x',
    'x1y': 'x', 'xy': 'x', 'x/y': 'x',
  },
  'classes, ?, escapes, comments, trailing spaces, negations': {
    '.gitignore': '# a comment\n[abc].txt\n[!a-c]?.md\n\\#hash\n\\!bang\ntrail.txt   \nsp\\ \n*.log\n!important.log\n[[:digit:]]*.dat\nback[\\]]x\n',
    'a.txt': 'x', 'd.txt': 'x', 'dx.md': 'x', 'ax.md': 'x', '#hash': 'x', '!bang': 'x', 'trail.txt': 'x',
    'sp ': 'x', 'sp': 'x', 'e.log': 'x', 'important.log': 'x', '1.dat': 'x', 'a1.dat': 'x', 'back]x': 'x', '# a comment': 'x',
  },
  'nested ignore files: deeper ones win, anchored to their folder; CRLF lines': {
    '.gitignore': '*.gen\n/local\n',
    '.runsetignore': 'data/\n',
    'sub/.gitignore': '!keep.gen\r\n/local\r\ndeep\r\n',
    'sub/.runsetignore': '!data/\n',
    'x.gen': 'x', 'sub/keep.gen': 'x', 'sub/other.gen': 'x', 'local': 'x', 'sub/local': 'x', 'sub/inner/local': 'x',
    'sub/inner/deep': 'x', 'deep': 'x', 'data/a': 'x', 'sub/data/b': 'x',
  },
};

function write(dir: string, tree: Tree, forGit: boolean): void {
  for (const [file, content] of Object.entries(tree)) {
    const full = path.join(dir, file);
    mkdirSync(path.dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
  if (!forGit) return;
  // git reads only .gitignore: each .runsetignore's lines go after its folder's .gitignore's, as runset reads them.
  for (const file of Object.keys(tree).filter((f) => path.basename(f) === '.runsetignore')) {
    const gitignore = path.join(path.dirname(file), '.gitignore');
    writeFileSync(path.join(dir, gitignore), `${tree[gitignore] ?? ''}\n${tree[file]}`);
  }
}

/** Every file and folder of the tree (folders without a trailing `/`). */
function allPaths(tree: Tree): string[] {
  const out = new Set<string>();
  for (const file of Object.keys(tree)) {
    const parts = file.split('/');
    for (let i = 1; i <= parts.length; i++) out.add(parts.slice(0, i).join('/'));
  }
  return [...out].sort();
}

for (const [name, tree] of Object.entries(CASES)) {
  test(`as git check-ignore says: ${name}`, { skip: NO_GIT }, async () => {
    const ours = tempDir('runset-gitignore-');
    write(ours, tree, false);
    const theirs = tempDir('runset-gitignore-git-');
    write(theirs, tree, true);
    execFileSync('git', ['init', '-q'], { cwd: theirs });
    const paths = allPaths(tree);
    const answer = spawnSync('git', ['check-ignore', '--stdin', '-z'], { cwd: theirs, input: paths.join('\0') + '\0', encoding: 'utf8' });
    assert.ok(answer.status === 0 || answer.status === 1, answer.stderr);
    const ignoredByGit = new Set(answer.stdout.split('\0').filter(Boolean));
    const packed = new Set((await walkSuite(ours)).entries.map((e) => e.path.replace(/\/$/, '')));
    const differ = paths.filter((p) => packed.has(p) === ignoredByGit.has(p)).map((p) => `${p}: git ${ignoredByGit.has(p) ? 'ignores' : 'keeps'} it, runset ${packed.has(p) ? 'packs' : 'leaves'} it`);
    assert.deepEqual(differ, []);
    assert.ok(ignoredByGit.size > 0 && packed.size > 0, 'the case leaves something out and packs something');
  });
}

test('a left-out folder is reported with the rule that leaves it out', async () => {
  const dir = tempDir('runset-gitignore-');
  write(dir, { '.gitignore': 'node_modules/\n\ndist/\n', 'dist/a': 'x', 'node_modules/m/index.js': 'x' }, false);
  const { leftOut } = await walkSuite(dir);
  assert.deepEqual(leftOut.map((f) => [f.path, f.rule.file, f.rule.line, f.rule.text]), [['dist', '.gitignore', 3, 'dist/']], 'node_modules is never packed, and not reported');
});
