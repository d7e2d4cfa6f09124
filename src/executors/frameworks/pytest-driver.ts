/**
 * The few lines of Python that run pytest for runset (`python -c DRIVER MODE
 * OUT ARGS…`): pytest.main with a plugin object, so that what runset reads is
 * written by pytest's own hooks, never parsed from its printed output.
 *
 * - Every case is named by its node id with the file part relative to the
 *   entry's folder (pytest's own ids are relative to its rootdir, which may be
 *   above it), so the listing, the run arguments and the report agree.
 * - `list`: collect only; OUT gets JSON {version, cases: [id], errors: [[id,
 *   text]]} (a file that fails to import is an error with pytest's own text).
 *   A usage or internal error (exit 3, 4) writes nothing: runset then shows
 *   pytest's own first lines.
 * - `run`: ARGS name the cases' files; OUT.cases.json lists the ids to run,
 *   the others collected are deselected (so a case renamed since the listing
 *   is missing from the report alone, where an unknown node id as an argument
 *   would stop pytest before it runs anything).
 *   pytest writes its JUnit XML (--junitxml in ARGS); the plugin adds to
 *   each case's `<properties>` its id (`runset.id`) and its executions
 *   (`runset.attempts`: pytest-rerunfailures marks its final report with the
 *   reruns before it, which its JUnit output does not say), and the files it
 *   printed as `[[ATTACHMENT|path]]` (the JUnit attachments convention of
 *   Jenkins and GitLab) in its captured output (`runset.attachments`, a JSON list).
 */
export const PYTEST_DRIVER = `
import json, os, re, sys
import pytest

ATTACHMENT = re.compile(r'\\[\\[ATTACHMENT\\|([^\\]\\r\\n]+)\\]\\]')

MODE, OUT, ARGS = sys.argv[1], sys.argv[2], sys.argv[3:]
WANTED = None
if MODE == 'run':
    with open(OUT + '.cases.json', encoding='utf-8') as wanted:
        WANTED = set(json.load(wanted))

class Runset:
    def __init__(self):
        self.config = None
        self.cases = []
        self.errors = []

    def pytest_configure(self, config):
        self.config = config

    def case_id(self, nodeid):
        file, sep, rest = nodeid.partition('::')
        full = os.path.join(str(self.config.rootpath), file)
        return os.path.relpath(full, str(self.config.invocation_params.dir)).replace(os.sep, '/') + sep + rest

    def pytest_collection_modifyitems(self, session, config, items):
        if WANTED is None:
            return
        keep = [item for item in items if self.case_id(item.nodeid) in WANTED]
        dropped = [item for item in items if self.case_id(item.nodeid) not in WANTED]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = keep

    def pytest_collection_finish(self, session):
        self.cases = [self.case_id(item.nodeid) for item in session.items]

    def pytest_collectreport(self, report):
        if report.failed:
            self.errors.append([self.case_id(report.nodeid), report.longreprtext])

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report):
        if report.when == 'teardown':
            report.user_properties.append(('runset.id', self.case_id(report.nodeid)))
            report.user_properties.append(('runset.attempts', getattr(report, 'rerun', 0) + 1))
            files = [path.strip() for _, text in report.sections for path in ATTACHMENT.findall(text)]
            if files:
                report.user_properties.append(('runset.attachments', json.dumps(files)))

plugin = Runset()
code = pytest.main(ARGS, plugins=[plugin])
if MODE == 'list' and int(code) not in (3, 4):
    with open(OUT, 'w', encoding='utf-8') as out:
        json.dump({'version': pytest.__version__, 'cases': plugin.cases, 'errors': plugin.errors}, out)
sys.exit(int(code))
`;

/** Prints the interpreter's own path, then pytest's version (the import fails when pytest is missing). */
export const PYTEST_PROBE = 'import sys; print(sys.executable, flush=True); import pytest; print(pytest.__version__)';
