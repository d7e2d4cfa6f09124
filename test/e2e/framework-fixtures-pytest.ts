/**
 * The pytest suite of the version matrix: Debian's python3-pytest (with
 * python3-pytest-rerunfailures for `retries`), run by /usr/bin/python3 — an
 * explicit interpreter, as a pyenv shim may shadow python3 on PATH. A pass
 * that prints, a failure, a skip, a case that passes on its rerun, an
 * expected failure (xfail) and three parametrized cases. `runDirectly` runs
 * it as a person would, with pytest's own JUnit XML, read here with
 * xmlbuilder2 (not runset's reader) as the reference, named by node id.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { create } from 'xmlbuilder2';
import type { DirectCase } from './framework-fixtures.js';

export const PYTHON = '/usr/bin/python3';

const SUITE = `import pytest

tries = {"n": 0}


class TestGroup:
    def test_passes(self):
        print("hello from passes")
        assert 1 + 1 == 2

    def test_fails(self):
        assert 1 + 1 == 3, "arithmetic still works"

    # The skip is the subject under test: runset must report a case that never runs as skipped.
    @pytest.mark.skip(reason="skipped on purpose")
    def test_skipped(self):
        pass

    def test_passes_on_retry(self):
        tries["n"] += 1
        assert tries["n"] == 2, "the first attempt fails"

    @pytest.mark.xfail(reason="a known bug")
    def test_expected_failure(self):
        assert False


@pytest.mark.parametrize("value", [1, 2, "a b"])
def test_param(value):
    assert value
`;

/** pytest's version for PYTHON, or why the matrix cannot run it (python3-pytest or its rerun plugin missing). */
export function pytestVersion(): { version: string } | { missing: string } {
  try {
    const out = execFileSync(PYTHON, ['-c', 'import pytest, pytest_rerunfailures; print(pytest.__version__)'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return { version: out.trim() };
  } catch (error) {
    const said = ((error as { stderr?: string }).stderr ?? (error as Error).message).trim().split('\n').at(-1);
    return { missing: `${PYTHON} has no pytest with pytest-rerunfailures (${said}): apt-get install python3-pytest python3-pytest-rerunfailures` };
  }
}

/** Writes the suite into `dir`; its file is named after `tag` so names differ across suites. */
export function writePytestSuite(dir: string, tag: string): string {
  mkdirSync(dir, { recursive: true });
  const file = `test_${tag.replace(/\W/g, '_')}.py`;
  writeFileSync(path.join(dir, file), SUITE);
  return file;
}

/** The case names in the order of the matrix's roles. */
export function pytestNames(file: string): { passes: string; fails: string; retried: string } {
  return { passes: `${file}::TestGroup::test_passes`, fails: `${file}::TestGroup::test_fails`, retried: `${file}::TestGroup::test_passes_on_retry` };
}

interface XmlNode {
  nodeName: string;
  children: ArrayLike<XmlNode>;
  getAttribute(name: string): string | null;
  getElementsByTagName(name: string): ArrayLike<XmlNode>;
}

/** pytest run in `dir` with one rerun and its JUnit XML (xunit1, which names each case's file); its cases by node id. */
export async function runPytestDirectly(dir: string): Promise<Map<string, DirectCase>> {
  const report = path.join(dir, 'direct-report.xml');
  const args = ['-m', 'pytest', '-p', 'no:cacheprovider', '--reruns', '1', '-o', 'junit_family=xunit1', `--junitxml=${report}`];
  await new Promise<void>((resolve) => execFile(PYTHON, args, { cwd: dir }, () => resolve()));
  const root = create(readFileSync(report, 'utf8')).root().node as unknown as XmlNode;
  const out = new Map<string, DirectCase>();
  for (const c of Array.from(root.getElementsByTagName('testcase'))) {
    const file = c.getAttribute('file') ?? '';
    const module = file.replace(/\.py$/, '').replace(/\//g, '.');
    const classes = (c.getAttribute('classname') ?? '').slice(module.length).split('.').filter((p) => p !== '');
    const name = [file, ...classes, c.getAttribute('name') ?? ''].join('::');
    const children = Array.from(c.children);
    const failure = children.find((n) => n.nodeName === 'failure' || n.nodeName === 'error');
    const status = failure ? 'failed' : children.some((n) => n.nodeName === 'skipped') ? 'skipped' : 'passed';
    out.set(name, { name, status, firstLine: failure ? (failure.getAttribute('message') ?? '').split('\n')[0] ?? '' : null });
  }
  return out;
}
