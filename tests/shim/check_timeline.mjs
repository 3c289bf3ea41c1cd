// check_timeline.mjs TRACE ENGINE_DIR POOLS MIN_WAITS SLEEP_LINE - reads the
// shim's trace of two pools with the DevTools trace engine (the npm package
// @paulirish/trace_engine, chrome-devtools-frontend's models/trace) and
// checks that what the shim wrote survives the parse.
//
// The engine parses thread and process metadata and "X" slices with their
// args (Meta, Renderer handlers), and pairs async "b"/"e" events with its
// own matcher (Helpers.Trace.createMatchedSortedSyntheticEvents, the one
// its user-timing and animation tracks use). It has no generic counter
// track, so counters are checked against the format's rules as catapult
// applies them: one track per pid, name and id, whose series are the arg
// keys of its first sample; a sample with other keys does not fit it.
// Prints one line per check; exits 0 when all pass, 1 otherwise.
import fs from 'node:fs';
import path from 'node:path';
import {pathToFileURL} from 'node:url';

const [tracePath, engineDir, poolList, minWaitsText, sleepLineText] =
    process.argv.slice(2);
const pools = poolList.split(',');
const minWaits = Number(minWaitsText);
let failed = 0;

function check(ok, what) {
  console.log(`${ok ? 'ok' : 'FAIL'}: ${what}`);
  if (!ok) failed++;
}

// The engine's layout code touches DOMRect, which Node.js lacks.
globalThis.DOMRect ??= class DOMRect {
  constructor(x = 0, y = 0, width = 0, height = 0) {
    Object.assign(this, {x, y, width, height});
  }
};

const Trace = await import(
    pathToFileURL(path.join(engineDir, 'models/trace/trace.js')).href);
const events = JSON.parse(fs.readFileSync(tracePath, 'utf8')).traceEvents;
const model = Trace.TraceModel.Model.createWithAllHandlers();
await model.parse(events);
const data = model.parsedTrace().data;

// Metadata: a name for the process and for every thread with a slice.
const pid = events.find(e => e.ph === 'X').pid;
const processName = data.Meta.processNames.get(pid)?.args?.name;
check(processName === 'shim_two_pools_target',
      `process_name is the program's name (${processName})`);
const named = data.Meta.threadsInProcess.get(pid) ?? new Map();
const slices = events.filter(e => e.ph === 'X');
const tids = [...new Set(slices.map(e => e.tid))];
for (const tid of tids)
  check(named.get(tid)?.args?.name,
        `thread ${tid} has a thread_name (${named.get(tid)?.args?.name})`);

// Blocked-call slices: every one in the engine's thread entries, with the
// function and the caller's file:line in its args.
const threads = data.Renderer.processes.get(pid)?.threads ?? new Map();
const parsedSlices = [...threads.values()].flatMap(
    t => t.entries.filter(e => e.ph === 'X' && e.cat === 'blocking'));
check(parsedSlices.length === slices.length && slices.length >= 2 * minWaits,
      `${parsedSlices.length} of ${slices.length} blocked-call slices parsed`);
const where = `two_pools_target.c:${sleepLineText}`;
check(parsedSlices.every(e => e.args.function === e.name &&
                              e.args.caller === 'sleeper' &&
                              String(e.args.at).endsWith(where)),
      `every slice's args name the function and ${where}`);

// Queue waits: the engine's async matcher pairs every "b" with its "e".
const asyncEvents = events.filter(e => e.ph === 'b' || e.ph === 'e')
                        .sort((a, b) => a.ts - b.ts);
const pairs = Trace.Helpers.Trace.createMatchedSortedSyntheticEvents(
    asyncEvents);
const begins = asyncEvents.filter(e => e.ph === 'b');
check(pairs.length === begins.length, `${pairs.length} of ${
                                          begins.length} queue waits paired`);
for (const pool of pools) {
  const mine = pairs.filter(p => p.name === `queue wait (${pool})`);
  check(mine.length >= minWaits &&
            mine.every(p => p.cat === 'queue' && p.dur > 0 &&
                            p.rawSourceEvent.args.pool === pool &&
                            Math.abs(p.dur / 1000 -
                                     p.rawSourceEvent.args.wait_ms) < 0.01),
        `pool ${pool}: ${mine.length} queue waits with their durations`);
  check(new Set(mine.map(p => p.tid)).size === 1,
        `pool ${pool}: its waits share one lane`);
}

// Counters, by the format's rules (see the header).
const tracks = new Map();
let misfits = 0;
for (const e of events.filter(e => e.ph === 'C')) {
  const key = `${e.pid}/${e.name}/${e.id ?? ''}`;
  const series = Object.keys(e.args).sort().join(',');
  if (!tracks.has(key)) tracks.set(key, {name: e.name, series, samples: []});
  const track = tracks.get(key);
  if (track.series !== series) {
    misfits++;
    continue;
  }
  track.samples.push(e);
}
check(misfits === 0, `${misfits} counter samples do not fit their track`);
for (const pool of pools) {
  for (const what of ['blocked workers', 'queue length']) {
    const name = `${what} (${pool})`;
    const track = [...tracks.values()].find(t => t.name === name);
    const written = events.filter(e => e.ph === 'C' && e.name === name);
    check(track && track.samples.length === written.length &&
              written.length > 0,
          `${name}: ${track ? track.samples.length : 0} of ${
              written.length} samples kept`);
  }
  const blocked =
      [...tracks.values()].find(t => t.name === `blocked workers (${pool})`);
  check(blocked && Math.max(...blocked.samples.map(s => s.args.value)) === 1,
        `blocked workers (${pool}) reaches its one worker`);
}
process.exit(failed ? 1 : 0);
