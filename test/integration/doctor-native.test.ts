// Proves doctor's native checks: each module loads here, a tree without them fails naming the module and the fix, OpenCV is required only by configurations that use it, and the notify path matches the unit.
import t from 'tap';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { openCvInstall, openCvUsers, openCvWarnings } from '../../src/config/opencv-users.js';
import { checkNotifyPath, checkOpenCv, fromDirectory, nativeChecks, unitNotifyAccess } from '../../src/doctor/native.js';
import { formatResult, runNativeDoctor } from '../../src/doctor/run.js';
import { SQLITE_NAPI, sqlitePackage } from '../../src/service/sqlite.js';
import { validConfig } from '../helpers/config-fixtures.js';
import { AgentConfig } from '../../src/config/schema.js';

const repo = join(import.meta.dirname, '../..');
const shippedUnit = join(repo, 'systemd/cortexd@.service');

function tempDir(t: { teardown: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-native-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A directory that resolves no native module at all, as a tree whose install lost them. */
function emptyTree(t: { teardown: (fn: () => void) => void }): string {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'package.json'), '{ "name": "empty", "type": "module" }\n');
  mkdirSync(join(dir, 'node_modules'));
  return fromDirectory(dir);
}

/** A parsed configuration (defaults filled) with a vision input whose camera has `binding`, and a text-only mode. */
const camera = (binding: string): AgentConfig =>
  AgentConfig.parse(
    validConfig({
      modes: {
        look: {
          display_name: 'Look',
          description: 'd',
          system_prompt_base: 'p',
          hertz: 1,
          agent_inputs: [{ type: 'VLMInput', config: { camera: { binding } } }],
        },
        chat: { display_name: 'Chat', description: 'd', system_prompt_base: 'p', hertz: 1, agent_inputs: [{ type: 'TextInput', config: {} }] },
      },
    }),
  );

t.test('on this machine every native module loads, OpenCV included', async (t) => {
  const report = await runNativeDoctor();
  const lines = report.results.map(formatResult);
  t.equal(report.exitCode, 0, lines.join('\n'));
  t.match(lines.join('\n'), /^ok {3}better-sqlite3: loads( \(better-sqlite3-node20: better-sqlite3 12 for Node-API \d+\))? \(SQLite 3\.\d+/m);
  t.match(lines.join('\n'), /^ok {3}unix-dgram: loads/m);
  t.match(lines.join('\n'), /^ok {3}serial binding: @serialport\/bindings-cpp loads/m);
  t.match(lines.join('\n'), /^ok {3}OpenCV: OpenCV 4\.\d+\.\d+ loads/m);
  t.match(lines.join('\n'), /^ok {3}service notify: unix-dgram sends READY=1 .* NotifyAccess=main/m);
});

t.test('a tree without the native modules fails each one by name, with the command that fixes it', async (t) => {
  const from = emptyTree(t);
  const results = await nativeChecks({ from, openCvUsers: openCvUsers(camera('opencv')), unitFile: shippedUnit });
  const byName = Object.fromEntries(results.map((r) => [r.name, r]));
  const sqlite = sqlitePackage();
  t.match(byName['better-sqlite3'], {
    status: 'fail',
    detail: new RegExp(`does not load.*: ${sqlite} .*is not installed`),
    fix:
      sqlite === SQLITE_NAPI ? /npm ci\), or compile it for this machine: cd .*better-sqlite3 && npm run build-release/ : /npm rebuild better-sqlite3-node20/,
  });
  t.match(byName['unix-dgram'], { status: 'fail', fix: /npm rebuild unix-dgram/ });
  t.match(byName['serial binding'], { status: 'fail', fix: /npm rebuild @serialport\/bindings-cpp/ });
  t.match(byName.OpenCV, {
    status: 'fail',
    detail: /@u4\/opencv4nodejs is not installed; needed by modes\.look\.agent_inputs\[0\]/,
    fix: /bash scripts\/setup\.sh` without --no-opencv/,
  });
  t.match(byName['service notify'], {
    status: 'fail',
    detail: /unix-dgram does not load .* NotifyAccess=main .* never sees READY=1/,
    fix: /npm rebuild unix-dgram.*NotifyAccess=all/,
  });
  for (const r of results) t.notMatch(r.detail, /Require stack/, `${r.name}: one line, no require stack`);
});

t.test('OpenCV is required only by a configuration that uses it', async (t) => {
  const from = emptyTree(t);
  const notNeeded = await checkOpenCv({ from, openCvUsers: openCvUsers(camera('synthetic')).filter(() => false) });
  t.match(notNeeded, { status: 'ok', detail: /not installed; the configuration does not use a camera or local vision/ });
  const noConfig = await checkOpenCv({ from });
  t.match(noConfig, { status: 'ok', detail: /not installed; configurations with a camera or local vision need it/ });

  // Installed by set-up --no-opencv: the package is there, its compiled module is not.
  const dir = tempDir(t);
  mkdirSync(join(dir, 'node_modules/@u4/opencv4nodejs/cjs'), { recursive: true });
  writeFileSync(join(dir, 'node_modules/@u4/opencv4nodejs/package.json'), '{ "name": "@u4/opencv4nodejs", "main": "cjs/index.js" }\n');
  writeFileSync(join(dir, 'node_modules/@u4/opencv4nodejs/cjs/package.json'), '{ "type": "commonjs" }\n');
  writeFileSync(join(dir, 'node_modules/@u4/opencv4nodejs/cjs/index.js'), 'module.exports = {};\n');
  t.same(openCvInstall(fromDirectory(dir)).state, 'unbuilt');
  const unbuilt = await checkOpenCv({ from: fromDirectory(dir), openCvUsers: openCvUsers(camera('file')) });
  t.match(unbuilt, { status: 'fail', detail: /installed without its compiled bindings \(set-up ran with --no-opencv\); needed by modes\.look/ });

  t.equal(openCvInstall().state, 'built', 'this checkout has compiled bindings');
  const here = await checkOpenCv({ openCvUsers: openCvUsers(camera('opencv')) });
  t.match(here, { status: 'ok', detail: /^OpenCV 4\.\d+\.\d+ loads; needed by modes\.look/ });
});

t.test('which entries load OpenCV: cameras of any binding and local vision, nothing else', async (t) => {
  t.same(
    openCvUsers(camera('opencv')).map((u) => u.path),
    ['modes.look.agent_inputs[0]'],
  );
  t.same(
    openCvUsers(camera('synthetic')).map((u) => u.path),
    ['modes.look.agent_inputs[0]'],
    'a synthetic camera draws frames with OpenCV',
  );
  const shipped = await loadConfig({ file: join(repo, 'config/default.json5') });
  t.same(openCvUsers(shipped.config), [{ path: 'modes.explore.agent_inputs[1]', why: 'LocalVLMInput reads a camera (binding synthetic) through OpenCV' }]);
  const conversation = await loadConfig({ file: join(repo, 'config/conversation.json5') });
  t.same(openCvUsers(conversation.config), [], 'a voice configuration does not need OpenCV');
  const serial = await loadConfig({ file: join(repo, 'config/serial_robot.json5') });
  t.same(openCvUsers(serial.config), [], 'a face action drives a display, not a camera');
  const plain = AgentConfig.parse(
    validConfig({
      modes: {
        a: {
          display_name: 'A',
          description: 'd',
          system_prompt_base: 'p',
          hertz: 1,
          agent_inputs: [{ type: 'VLMInput' }, { type: 'OldCam', config: { camera_index: 1 } }],
        },
      },
      default_mode: 'a',
      transition_rules: [],
    }),
  );
  t.same(
    openCvUsers(plain).map((u) => u.path),
    ['modes.a.agent_inputs[0]'],
    'a vision input without a camera block uses the opencv binding; the first camera doctor finds is that same entry',
  );

  const warnings = openCvWarnings(shipped.config, { state: 'absent' });
  t.equal(warnings.length, 1);
  t.match(warnings[0]!, {
    path: 'modes.explore.agent_inputs[1]',
    message: /is not installed; this entry will fail when it starts\. Fix: run `bash scripts\/setup\.sh` without --no-opencv/,
  });
  t.same(openCvWarnings(shipped.config), [], 'no warning where the bindings are compiled');
});

t.test('notify path: NotifyAccess from the unit and its drop-ins decides whether the fallback works', async (t) => {
  t.equal(unitNotifyAccess(shippedUnit), 'main', 'the shipped unit lets only node notify');
  const dir = tempDir(t);
  const unit = join(dir, 'cortexd@.service');
  writeFileSync(unit, '[Service]\nType=notify\n# NotifyAccess=none (a comment)\nNotifyAccess=main\n');
  const from = emptyTree(t);
  t.match(checkNotifyPath({ unitFile: unit, from }), { status: 'fail' });

  mkdirSync(`${unit}.d`);
  writeFileSync(join(`${unit}.d`, 'override.conf'), '[Service]\nNotifyAccess=all\n');
  t.equal(unitNotifyAccess(unit), 'all', 'a drop-in overrides the unit');
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'systemd-notify'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  t.match(checkNotifyPath({ unitFile: unit, from, env: { PATH: bin } }), {
    status: 'warn',
    detail: /messages go through .*systemd-notify, which NotifyAccess=all/,
  });
  t.match(checkNotifyPath({ unitFile: unit, from, env: { PATH: join(dir, 'nothing') } }), { status: 'fail', detail: /not on PATH/ });

  t.match(checkNotifyPath({ unitFile: unit }), { status: 'ok', detail: /unix-dgram sends READY=1/ }, 'with unix-dgram any NotifyAccess but none works');
  writeFileSync(join(`${unit}.d`, 'zz.conf'), '[Service]\nNotifyAccess=none\n');
  t.match(checkNotifyPath({ unitFile: unit }), { status: 'fail', detail: /NotifyAccess=none/ });
});
