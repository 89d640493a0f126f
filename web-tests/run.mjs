// Browser tests of `rein serve`: the real binary with scripted models, driven in Debian's
// headless Chromium by playwright-core. Run by crates/rein-cli/tests/web_browser.rs (which
// sets REIN_BIN), or by hand: REIN_BIN=target/release/rein node web-tests/run.mjs
//
// Each scenario gets a fresh data folder, workspace and server. Screenshots go to
// OUT (default target/web-tests/). Prints "N passed, M failed" last; exits 1 on any failure.
// REIN_WEB_ONLY=name runs one scenario; REIN_WEB_REAL_MODEL=1 adds the real 0.5B bench run.

import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const BIN = resolve(process.env.REIN_BIN || join(here, '..', 'target', 'release', 'rein'));
const OUT = resolve(process.env.OUT || join(here, '..', 'target', 'web-tests'));
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
mkdirSync(OUT, { recursive: true });

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const RLO = '\u202e';
const EVIL = `<img src=x onerror=window.__xss=1>${RLO}txt.exe`;
const SCRIPT = '<script>window.__xss=2</script>';
// Workspace paths may not hold < > " or bidi characters (rein-workspace refuses them), so a
// hostile name reaches the cowork page only in a refused call; the markup and the override go
// into a file's content and a proposed change.
const EVIL_FILE = 'odd & \'x\'.txt';
const TIMEOUT = 30_000;

function act(action, parameters, thought = 'next') {
  return JSON.stringify({ thought, action, parameters });
}

/** A scratch folder: data dir, workspace, scripts. */
function scratch() {
  const root = mkdtempSync(join(tmpdir(), 'rein-web-'));
  const home = join(root, 'home');
  const ws = join(root, 'ws');
  mkdirSync(ws);
  writeFileSync(join(ws, 'notes.txt'), 'alpha\nbeta\n');
  // The real-model scenario reads the pulled models from the usual data folder.
  if (process.env.REIN_MODELS_DIR) {
    mkdirSync(home);
    symlinkSync(resolve(process.env.REIN_MODELS_DIR), join(home, 'models'));
  }
  return { root, home, ws };
}

/** Starts `rein serve --json ...`; resolves to {url, base, child}. */
function serve(s, args) {
  return new Promise((resolveServe, reject) => {
    const child = spawn(BIN, ['serve', '--json', '--port', '0', ...args], {
      env: { ...process.env, REIN_HOME: s.home, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`rein serve did not print its URL: ${err}`)), TIMEOUT);
    child.stderr.on('data', (d) => { err += d; });
    child.stdout.on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl >= 0) {
        clearTimeout(timer);
        const doc = JSON.parse(out.slice(0, nl));
        resolveServe({ url: doc.url, base: `http://127.0.0.1:${doc.port}`, child, stderr: () => err });
      }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`rein serve exited ${code}: ${err}`)); });
  });
}

async function browser(s) {
  const profile = join(s.root, 'profile');
  mkdirSync(profile);
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 800 },
  });
}

async function shot(page, name) {
  await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });
}

/** Runs `body(page, server, s)` with a server started with `args(s)`; cleans up. */
async function withServer(makeArgs, body) {
  const s = scratch();
  const server = await serve(s, makeArgs(s));
  const context = await browser(s);
  const page = context.pages()[0] || await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  // No request may leave the server: no CDN, nothing outside.
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith(server.base) && !u.startsWith('data:') && !u.startsWith('about:')) problems.push(`outside request: ${u}`);
  });
  try {
    try {
      await body(page, server, s);
    } catch (e) {
      await shot(page, 'failed-last').catch(() => {});
      throw new Error(`${e.message}\nserver stderr: ${server.stderr()}`);
    }
    // Console errors are expected (a refused request logs one); outside requests and script
    // errors are not.
    assert.deepEqual(problems.filter((p) => p.startsWith('outside') || p.startsWith('page error')), []);
  } finally {
    await context.close();
    server.child.kill();
    rmSync(s.root, { recursive: true, force: true });
  }
}

const scenarios = {};

scenarios.no_token_is_refused = () => withServer(() => [], async (page, server) => {
  const response = await page.goto(`${server.base}/cowork`);
  assert.equal(response.status(), 401);
  assert.match(response.headers()['content-type'], /^text\/html/);
  assert.match(await page.textContent('h1'), /^Refused \(401\)/);
  assert.match(await page.textContent('body'), /launch token/);
  assert.equal(await page.locator('#log, #cards, textarea').count(), 0, 'no page content');
  await shot(page, 'no-token');
  // A forged origin (a page on another site posting to the server) is refused too.
  const status = await page.evaluate(async () => (await fetch('/api/sessions', { method: 'POST', body: '{}' })).status);
  assert.equal(status, 401);
  // With the token, the cookie is set and the URL loses the token.
  await page.goto(server.url);
  assert.equal(new URL(page.url()).search, '');
  assert.equal(new URL(page.url()).pathname, '/cowork');
});

scenarios.bench_toy_task_shows_verdict_and_trace_cards = () => withServer((s) => {
  const model = join(s.root, 'note.jsonl');
  writeFileSync(model, [
    act('create_file', { path: 'note.txt', content: 'hello world' }, 'I create the note'),
    act('read_file', { path: 'note.txt' }),
    act('final_answer', { answer: 'done' }),
  ].join('\n'));
  const evil = join(s.root, 'evil.jsonl');
  writeFileSync(evil, [
    act('create_file', { path: EVIL, content: `${SCRIPT}\n<img src=x onerror=window.__xss=3>` }, `${SCRIPT}<img src=x onerror=window.__xss=4>${RLO}evil`),
    act('final_answer', { answer: `${SCRIPT} done` }),
  ].join('\n'));
  return ['--model', `scripted:${model}`, '--model', `scripted:${evil}`];
}, async (page, server) => {
  await page.goto(server.url.replace('/?', '/bench?'));
  await page.waitForSelector('.chips button');
  await page.click('.chips button >> nth=0');
  await page.click('#run');
  await page.waitForSelector('.verdict.pass', { timeout: TIMEOUT });
  const verdict = await page.textContent('.verdict');
  assert.match(verdict, /^PASS/);
  assert.equal(await page.locator('.result .step').count(), 3);
  const first = await page.textContent('.result .step >> nth=0');
  assert.match(first, /I create the note/);
  assert.match(first, /create_file/);
  assert.match(first, /executed/);
  // The live stream showed the model's last reply as it came.
  assert.match(await page.textContent('.result .live'), /final_answer/);
  assert.match(await page.textContent('.result .end'), /note\.txt[\s\S]*hello world/);
  await page.waitForSelector('#past a');
  await page.waitForSelector('#compare .barrow');
  assert.match(await page.textContent('#compare'), /adhoc:[0-9a-f]{12} · scripted:.*note\.jsonl.*1\/1 100%/);
  await shot(page, 'bench-pass');

  // The evil model: thought, file name and content shown as text, never run.
  await page.uncheck('#model-0');
  await page.check('#model-1');
  await page.fill('#task', 'Create a file called x.txt with the content \'hi\'.');
  await page.click('#run');
  await page.waitForSelector('.result .verdict:not(.running)', { timeout: TIMEOUT });
  await page.waitForSelector('.result .end h4', { timeout: TIMEOUT });
  const text = await page.textContent('.result');
  assert.ok(text.includes(SCRIPT), 'the <script> thought is shown as text');
  assert.ok(text.includes('<img src=x onerror=window.__xss=4>\\u{202e}evil'), 'the RLO in a thought is made visible');
  assert.ok(text.includes('\\u{202e}txt.exe'), 'the RLO in a file name is made visible');
  assert.ok(!text.includes(RLO), 'no raw RLO reaches the page');
  assert.equal(await page.evaluate(() => window.__xss), undefined);
  assert.equal(await page.locator('.result img').count(), 0);
  assert.equal(await page.locator('.result script').count(), 0);
  await shot(page, 'bench-xss');
});

scenarios.bench_suite_task_shows_progress_verdict_and_a_per_task_bar = () => withServer((s) => {
  const model = join(s.root, 'note.jsonl');
  writeFileSync(model, [
    act('create_file', { path: 'note.txt', content: 'hello world' }, 'I create the note'),
    act('read_file', { path: 'note.txt' }),
    act('final_answer', { answer: 'done' }),
  ].join('\n'));
  return ['--model', `scripted:${model}`, '--suite', join(here, '..', 'suites', 'toy')];
}, async (page, server) => {
  await page.goto(server.url.replace('/?', '/bench?'));
  await page.waitForSelector('#suite option[value="toy"]', { state: 'attached' });
  await page.check('#kind-suite');
  assert.equal(await page.isVisible('#task'), false, 'the ad-hoc task box hides in suite mode');
  await page.selectOption('#suite-task', 'note-hello');
  assert.equal(await page.isDisabled('#split'), true, 'one task: no split');
  await page.click('#run');
  await page.waitForSelector('.result .progress:has-text("FINISHED")', { timeout: TIMEOUT });
  assert.match(await page.textContent('.result .progress'), /1 of 1 tasks done · 1 passed/);
  assert.match(await page.textContent('.taskrun h4'), /Task 1 of 1: note-hello/);
  assert.match(await page.textContent('.taskrun .verdict'), /^PASS/);
  assert.equal(await page.locator('.taskrun .step').count(), 3);
  assert.match(await page.textContent('.taskrun .end'), /note\.txt[\s\S]*hello world/);
  await page.waitForSelector('#compare .barrow');
  assert.match(await page.textContent('#compare'), /toy\/note-hello · scripted:.*note\.jsonl.*1\/1 100%/);
  assert.doesNotMatch(await page.textContent('#compare'), /adhoc/);
  await shot(page, 'bench-suite');
  // A split of the suite: progress counts every task; Stop ends it early and says so.
  await page.selectOption('#suite-task', '');
  await page.selectOption('#split', 'all');
  await page.click('#run');
  await page.waitForSelector('.result .progress:has-text("tasks done")', { timeout: TIMEOUT });
  await page.click('#stop');
  await page.waitForSelector('.result .progress:has-text("STOPPED"), .result .progress:has-text("FINISHED")', { timeout: TIMEOUT });
  const progress = await page.textContent('.result .progress');
  assert.match(progress, /of 20 tasks done/, progress);
  await shot(page, 'bench-suite-stopped');
});

/** A cowork server: a scripted actor and a scripted decision model that allows every write. */
function coworkArgs(actorLines, writes, extra = []) {
  return (s) => {
    writeFileSync(join(s.ws, EVIL_FILE), `${SCRIPT}\nline two\n`);
    const actor = join(s.root, 'actor.jsonl');
    writeFileSync(actor, actorLines.join('\n'));
    const decision = join(s.root, 'decision.jsonl');
    writeFileSync(decision, Array(writes).fill(JSON.stringify({ yes: 0.95, no: 0.05 })).join('\n'));
    return ['--workspace', s.ws, '--chat-model', `scripted:${actor}`,
      '--decision-model', `scripted:${decision}`, ...extra];
  };
}

async function say(page, text) {
  await page.fill('#text', text);
  await page.click('#send');
}

function card(page, n) {
  return page.locator(`article.card[data-approval="${n}"]`);
}

scenarios.cowork_allow_once_deny_undo_stale_and_xss = () => withServer(coworkArgs([
  act('edit_file', { path: 'notes.txt', old_text: 'beta', new_text: 'gamma' }),
  act('edit_file', { path: 'notes.txt', old_text: 'alpha', new_text: 'ALPHA' }),
  act('read_file', { path: EVIL }),
  act('edit_file', { path: EVIL_FILE, old_text: 'line two', new_text: `<img src=x onerror=window.__xss=5>${RLO}two` }),
], 3), async (page, server, s) => {
  await page.goto(server.url);
  await page.waitForSelector('#status:has-text("conversation")');
  // 1. A card; Allow once; the file changes on disk and the change is listed.
  await say(page, 'change beta');
  await card(page, 1).waitFor();
  const c1 = await card(page, 1).textContent();
  assert.match(c1, /Review the exact change/);
  assert.match(c1, /expires in \d+:\d\d/);
  assert.equal(await card(page, 1).locator('button').count(), 2, 'only Allow once and Deny');
  assert.match(await card(page, 1).locator('.sbs').textContent(), /beta[\s\S]*gamma/);
  await shot(page, 'cowork-card');
  await card(page, 1).locator('button.allow').click();
  await page.waitForSelector('#changes li[data-change]');
  assert.equal(readFileSync(join(s.ws, 'notes.txt'), 'utf8'), 'alpha\ngamma\n');
  assert.match(await card(page, 1).textContent(), /applied as change/);
  await shot(page, 'cowork-applied');
  // Approving the same card again is refused, with the message on the page.
  await page.evaluate(async () => { await fetch(location.pathname.replace('/cowork', '') + '/api/sessions/1/approve', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"approval":1}' }); });
  await page.waitForSelector('.log li.error');
  // Undo puts the old content back.
  await page.click('#changes button');
  await page.waitForFunction(() => document.querySelector('#log').textContent.includes('Undid change'));
  assert.equal(readFileSync(join(s.ws, 'notes.txt'), 'utf8'), 'alpha\nbeta\n');

  // 2. Deny: nothing written.
  await say(page, 'change alpha');
  await card(page, 2).waitFor();
  await card(page, 2).locator('button.deny').click();
  await page.waitForFunction(() => document.querySelector('article.card[data-approval="2"]').textContent.includes('denied'));
  assert.equal(readFileSync(join(s.ws, 'notes.txt'), 'utf8'), 'alpha\nbeta\n');

  // 3. A hostile file name and content: shown as text, bidi made visible; then the file
  // changes on disk before Allow once: refused, nothing written.
  await say(page, 'fix the odd file');
  await card(page, 3).waitFor();
  const c3 = await card(page, 3).textContent();
  assert.ok(c3.includes("odd & 'x'.txt"), c3);
  assert.ok(c3.includes('<img src=x onerror=window.__xss=5>\\u{202e}two'), c3);
  assert.ok(c3.includes(SCRIPT), 'the file\'s <script> line is shown as text in the diff');
  const log = await page.textContent('#log');
  assert.ok(log.includes('<img src=x onerror=window.__xss=1>\\u{202e}txt.exe'), 'the refused read shows the hostile name as text');
  assert.ok(!(await page.textContent('body')).includes(RLO), 'no raw RLO on the page');
  assert.equal(await page.evaluate(() => window.__xss), undefined);
  assert.equal(await page.locator('main img, main script').count(), 0);
  await shot(page, 'cowork-xss');
  writeFileSync(join(s.ws, EVIL_FILE), 'changed by someone else\n');
  await card(page, 3).locator('button.allow').click();
  await page.waitForFunction(() => document.querySelector('article.card[data-approval="3"]').textContent.includes('not applied'));
  assert.equal(readFileSync(join(s.ws, EVIL_FILE), 'utf8'), 'changed by someone else\n');
  await page.setViewportSize({ width: 420, height: 800 });
  await shot(page, 'cowork-narrow');
});

scenarios.cowork_card_expires = () => withServer(coworkArgs([
  act('edit_file', { path: 'notes.txt', old_text: 'beta', new_text: 'gamma' }),
], 1, ['--test-approval-lifetime-ms', '3000']), async (page, server, s) => {
  await page.goto(server.url);
  await page.waitForSelector('#status:has-text("conversation")');
  await say(page, 'change beta');
  await card(page, 1).waitFor();
  await page.waitForFunction(() => document.querySelector('article.card[data-approval="1"]').textContent.includes('expired without a decision'), null, { timeout: TIMEOUT });
  assert.equal(await card(page, 1).locator('button:enabled').count(), 0);
  // Approving after expiry (bypassing the disabled button) is refused with a message shown.
  await page.evaluate(async () => { await fetch('/api/sessions/1/approve', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"approval":1}' }); });
  await page.waitForSelector('.log li.error');
  assert.match(await page.textContent('.log li.error'), /expired|not pending|no approval/i);
  assert.equal(readFileSync(join(s.ws, 'notes.txt'), 'utf8'), 'alpha\nbeta\n');
  await shot(page, 'cowork-expired');
});

scenarios.cowork_hold_is_not_a_card_and_the_round_cap_stops_the_turn = () => withServer((s) => {
  const actor = join(s.root, 'actor.jsonl');
  writeFileSync(actor, [
    act('edit_file', { path: 'notes.txt', old_text: 'beta', new_text: 'gamma' }),
    ...Array.from({ length: 11 }, () => act('list_dir', { path: '.' })),
  ].join('\n'));
  const decision = join(s.root, 'decision.jsonl');
  writeFileSync(decision, JSON.stringify({ yes: 0.1, no: 0.9 }));
  return ['--workspace', s.ws, '--chat-model', `scripted:${actor}`, '--decision-model', `scripted:${decision}`];
}, async (page, server, s) => {
  await page.goto(server.url);
  await page.waitForSelector('#status:has-text("conversation")');
  await say(page, 'change beta');
  await page.waitForSelector('.log li.hold');
  assert.match(await page.textContent('.log li.hold'), /^Held \(no approval card, nothing written\)/);
  assert.equal(await page.locator('article.card').count(), 0);
  assert.equal(readFileSync(join(s.ws, 'notes.txt'), 'utf8'), 'alpha\nbeta\n');
  // The held change did not end the turn; the twelfth round does.
  await page.waitForSelector('.log li.stop', { timeout: TIMEOUT });
  assert.match(await page.textContent('.log li >> nth=0'), /^change beta/, 'the message comes first in the log');
  assert.match(await page.textContent('.log li.stop'), /\[stopped\] I stopped after 12 tool rounds/);
  await shot(page, 'cowork-hold-and-stop');
});

scenarios.runs_viewer_shows_a_run_step_by_step = () => withServer((s) => {
  const model = join(s.root, 'note.jsonl');
  writeFileSync(model, [
    act('create_file', { path: 'note.txt', content: 'hello world' }, `${SCRIPT}${RLO}`),
    act('read_file', { path: 'note.txt' }),
    act('final_answer', { answer: 'done' }),
  ].join('\n'));
  return ['--model', `scripted:${model}`];
}, async (page, server) => {
  await page.goto(server.url.replace('/?', '/bench?'));
  await page.waitForSelector('.chips button');
  await page.click('.chips button >> nth=0');
  await page.click('#run');
  await page.waitForSelector('.result .end h4', { timeout: TIMEOUT });
  await page.goto(`${server.base}/runs`);
  await page.click('#list a >> nth=0');
  await page.waitForSelector('#trace .step');
  assert.equal(await page.locator('#trace .step').count(), 3);
  const text = await page.textContent('#trace');
  assert.match(text, /PASS/);
  assert.ok(text.includes(`${SCRIPT}\\u{202e}`));
  assert.equal(await page.evaluate(() => window.__xss), undefined);
  const missing = await page.goto(`${server.base}/runs?run=999`);
  assert.equal(missing.status(), 200);
  await page.waitForSelector('#notice:not([hidden])');
  assert.match(await page.textContent('#notice'), /no run 999/);
  await page.goto(`${server.base}/runs?run=1`);
  await page.waitForSelector('#trace .step');
  await shot(page, 'runs');
});

scenarios.runs_viewer_shows_a_conversation_step_by_step = () => withServer((s) => {
  const actor = join(s.root, 'actor.jsonl');
  writeFileSync(actor, [
    act('edit_file', { path: 'notes.txt', old_text: 'beta', new_text: 'gamma' }),
    act('edit_file', { path: 'notes.txt', old_text: 'alpha', new_text: `<img src=x onerror=window.__xss=6>${RLO}` }),
    act('finish', { summary: `I left alpha alone\n${SCRIPT}${RLO}` }, 'alpha is held'),
  ].join('\n'));
  const decision = join(s.root, 'decision.jsonl');
  writeFileSync(decision, [{ yes: 0.95, no: 0.05 }, { yes: 0.1, no: 0.9 }, { yes: 0.9, no: 0.1 }].map((d) => JSON.stringify(d)).join('\n'));
  return ['--workspace', s.ws, '--chat-model', `scripted:${actor}`, '--decision-model', `scripted:${decision}`];
}, async (page, server, s) => {
  await page.goto(server.url);
  await page.waitForSelector('#status:has-text("conversation")');
  await say(page, 'change beta');
  await card(page, 1).waitFor();
  await card(page, 1).locator('button.allow').click();
  await page.waitForSelector('#changes li[data-change]');
  await say(page, 'change alpha');
  await page.waitForSelector('.log li.hold');
  await page.waitForFunction(() => document.querySelector('#status').textContent === 'ready');
  // The answer is prose, not the reply's JSON; hostile text in it is shown, not run.
  const chat = await page.textContent('#log');
  assert.ok(!chat.includes('"thought"') && !chat.includes('"action"'), chat);
  const answers = await page.locator('#log li.answer').allTextContents();
  assert.ok(answers.some((a) => a === `I left alpha alone\n${SCRIPT}\\u{202e}`), answers.join(' | '));
  assert.match(chat, /thinking: next/, 'each tool round shows its thought as prose');
  assert.equal(await page.evaluate(() => window.__xss), undefined);
  await shot(page, 'cowork-prose');
  await page.goto(`${server.base}/runs`);
  await page.click('#conversations a >> nth=0');
  await page.waitForSelector('#trace ol.log li');
  const steps = await page.locator('#trace ol.log li').allTextContents();
  const order = ['change beta', 'route:', 'tool call: edit_file', 'write gate on "notes.txt": passed', 'approval 1 requested',
    'approval 1: allowed once', 'approval 1 applied', 'change alpha', 'Held (no approval card', 'turn ended [answered]: I left alpha alone'];
  let at = -1;
  for (const want of order) {
    const found = steps.findIndex((t, i) => i > at && t.includes(want));
    assert.ok(found > at, `"${want}" after step ${at} in:\n${steps.join('\n')}`);
    at = found;
  }
  assert.ok(!steps.some((t) => t.startsWith('token:')), 'streamed pieces are not kept, the answer is');
  const cards = await page.textContent('#trace table');
  assert.match(cards, /approval 1[\s\S]*applied[\s\S]*\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
  const text = await page.textContent('#trace');
  assert.ok(text.includes('<img src=x onerror=window.__xss=6>\\u{202e}'), 'the hostile edit is shown as text');
  assert.equal(await page.evaluate(() => window.__xss), undefined);
  assert.equal(await page.locator('#trace img, #trace script').count(), 0);
  const missing = await page.goto(`${server.base}/runs?conversation=999`);
  assert.equal(missing.status(), 200);
  await page.waitForSelector('#notice:not([hidden])');
  assert.match(await page.textContent('#notice'), /no conversation 999/);
  await page.goto(`${server.base}/runs?conversation=1`);
  await page.waitForSelector('#trace ol.log li');
  await shot(page, 'runs-conversation');
});

/** What has focus: a short description, whether its focus ring shows, and its box. */
async function focused(page) {
  return page.evaluate(() => {
    const e = document.activeElement;
    if (!e || e === document.body) return { what: 'body', ring: false };
    const style = getComputedStyle(e);
    const ring = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2;
    const what = e.id ? `#${e.id}` : `${e.tagName.toLowerCase()}:${(e.getAttribute('aria-label') || e.textContent || '').trim().slice(0, 30)}`;
    return { what, ring };
  });
}

/** Presses Tab until `want` (a description from `focused`) has focus; returns what it passed. */
async function tabTo(page, want, most = 40) {
  const seen = [];
  for (let i = 0; i < most; i += 1) {
    await page.keyboard.press('Tab');
    const f = await focused(page);
    assert.ok(f.what === 'body' || f.ring, `${f.what} has focus without a visible focus ring`);
    seen.push(f.what);
    if (f.what === want || f.what.startsWith(want)) return seen;
  }
  throw new Error(`Tab never reached ${want}; it went: ${seen.join(' → ')}`);
}

/** Every control of the page has an accessible name (Chromium's own accessibility tree). */
async function namedControls(page) {
  const cdp = await page.context().newCDPSession(page);
  const { nodes } = await cdp.send('Accessibility.getFullAXTree');
  const roles = ['button', 'link', 'textbox', 'combobox', 'checkbox', 'radio', 'listbox'];
  const controls = nodes.filter((n) => !n.ignored && roles.includes(n.role && n.role.value));
  const nameless = controls.filter((n) => !(n.name && String(n.name.value).trim()));
  assert.deepEqual(nameless.map((n) => `${n.role.value} (node ${n.backendDOMNodeId})`), [], 'every control has an accessible name');
  await cdp.detach();
  return controls.length;
}

/** No horizontal scrolling at 1280x800 and 390x800; a screenshot of each. */
async function fits(page, name) {
  for (const [w, h] of [[1280, 800], [390, 800]]) {
    await page.setViewportSize({ width: w, height: h });
    await page.waitForTimeout(100);
    const { scroll, inner } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
    assert.ok(scroll <= inner, `${name} at ${w}x${h} scrolls sideways: ${scroll} > ${inner}`);
    await shot(page, `a11y-${name}-${w}`);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

scenarios.accessibility_keyboard_names_and_widths = () => withServer((s) => {
  const model = join(s.root, 'note.jsonl');
  writeFileSync(model, [
    act('create_file', { path: 'note.txt', content: 'hello world' }, 'I create the note'),
    act('read_file', { path: 'note.txt' }),
    act('final_answer', { answer: 'done' }),
  ].join('\n'));
  return [...coworkArgs([
    act('edit_file', { path: 'notes.txt', old_text: 'beta', new_text: 'gamma' }),
    act('edit_file', { path: 'notes.txt', old_text: 'alpha', new_text: 'ALPHA' }),
  ], 2)(s), '--model', `scripted:${model}`, '--suite', join(here, '..', 'suites', 'toy')];
}, async (page, server, s) => {
  // Cowork, keyboard only: nav, workspace, Open, message, Send, Interrupt, Refresh, in order.
  await page.goto(server.url);
  await page.waitForSelector('#status:has-text("conversation")');
  await page.evaluate(() => document.activeElement && document.activeElement.blur());
  const order = await tabTo(page, '#refresh');
  const want = ['a:Cowork', 'a:Bench', 'a:Runs', '#workspace', '#start', '#text', '#send', '#interrupt', '#refresh'];
  assert.deepEqual(order.filter((w) => want.includes(w)), want, `Tab order: ${order.join(' → ')}`);
  assert.ok(await namedControls(page) >= want.length);
  // Type, then Send with Enter; the card takes focus; Space allows once.
  await page.focus('#text');
  await page.keyboard.type('change beta');
  await tabTo(page, '#send');
  await page.keyboard.press('Enter');
  await card(page, 1).waitFor();
  assert.equal((await focused(page)).what, 'button:Allow once', 'the new card\'s Allow once has focus');
  await namedControls(page);
  await page.keyboard.press('Space');
  await page.waitForFunction(() => document.querySelector('article.card[data-approval="1"]').textContent.includes('applied as change'));
  assert.equal(readFileSync(join(s.ws, 'notes.txt'), 'utf8'), 'alpha\ngamma\n');
  // Deny with Tab and Enter.
  await page.focus('#text');
  await page.keyboard.type('change alpha');
  await page.keyboard.press('Control+Enter');
  await card(page, 2).waitFor();
  await page.keyboard.press('Tab');
  assert.equal((await focused(page)).what, 'button:Deny');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('article.card[data-approval="2"]').textContent.includes('denied'));
  assert.equal(readFileSync(join(s.ws, 'notes.txt'), 'utf8'), 'alpha\ngamma\n');
  // Readable without colour: states are words.
  assert.match(await card(page, 1).locator('.state').textContent(), /applied as change/);
  assert.match(await card(page, 2).locator('.state').textContent(), /denied; nothing was written/);
  await page.waitForSelector('#changes li[data-change]');
  await fits(page, 'cowork');

  // Bench, keyboard only: a Try chip with Enter, then Run with Space.
  await page.goto(`${server.base}/bench`);
  await page.waitForSelector('.chips button');
  const benchOrder = await tabTo(page, 'button:Try: Create a file called note');
  assert.ok(benchOrder.includes('#model-0') && benchOrder.includes('#kind-task') && benchOrder.indexOf('#task') < benchOrder.length - 1, benchOrder.join(' → '));
  await page.keyboard.press('Enter');
  assert.match(await page.inputValue('#task'), /note\.txt/);
  await tabTo(page, '#run');
  await page.keyboard.press('Space');
  await page.waitForSelector('.result .end h4', { timeout: TIMEOUT });
  assert.match(await page.textContent('.result .verdict'), /^PASS/, 'the verdict is a word, not a colour');
  await page.waitForSelector('#compare .barrow');
  assert.ok(await namedControls(page) >= 6);
  await fits(page, 'bench');
  // The suite controls are reachable and named too.
  await page.focus('#kind-suite');
  await page.keyboard.press('Space');
  assert.equal(await page.isVisible('#suite'), true);
  await tabTo(page, '#suite');
  await tabTo(page, '#suite-task');
  await namedControls(page);

  // The run viewer: a run step by step, and a conversation.
  await page.goto(`${server.base}/runs?run=1`);
  await page.waitForSelector('#trace .step');
  await namedControls(page);
  await fits(page, 'runs');
  await page.goto(`${server.base}/runs?conversation=1`);
  await page.waitForSelector('#trace ol.log li');
  await fits(page, 'conversation');
});

scenarios.real_model_bench = () => withServer(() => ['--model', 'qwen2.5-coder-0.5b'], async (page, server) => {
  await page.goto(server.url.replace('/?', '/bench?'));
  await page.waitForSelector('.chips button');
  await page.click('.chips button >> nth=0');
  await page.click('#run');
  await page.waitForSelector('.result .end h4', { timeout: 20 * 60_000 });
  assert.match(await page.textContent('.result .verdict'), /^(PASS|FAIL)/);
  assert.ok(await page.locator('.result .step').count() >= 1);
  await shot(page, 'bench-real-model');
});

const only = process.env.REIN_WEB_ONLY;
let passed = 0;
let failed = 0;
for (const [name, run] of Object.entries(scenarios)) {
  if (only && only !== name) continue;
  if (!only && name.startsWith('real_model') && process.env.REIN_WEB_REAL_MODEL !== '1') continue;
  const started = Date.now();
  try {
    await run();
    passed += 1;
    console.log(`ok ${name} (${Date.now() - started} ms)`);
  } catch (e) {
    failed += 1;
    console.log(`FAIL ${name}: ${e.stack || e}`);
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
