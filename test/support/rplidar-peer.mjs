// A stand-in RPLidar for tests: a separate program on a pty's device end that speaks Slamtec's protocol (info, health, scans of a box room) and misbehaves on request.
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { SerialPort } from 'serialport';

/*
 * Usage: node test/support/rplidar-peer.mjs PTY [ROOM_JSON]
 * ROOM_JSON: {"front":1,"back":1,"left":1,"right":1} metres from the sensor to the walls of a box
 * room, the sensor's zero pointing at "front", angles clockwise as a real RPLidar's.
 * Lines on stdin change it while it runs:
 *   room {...}          the walls move (the robot drove)
 *   garbage N           N random bytes into the stream now
 *   spin off|on         the motor stops (no more nodes) or turns again
 *   baud wrong|ok       as if the host used another baud rate: requests are not understood and the
 *                       sensor's output arrives as noise (a pty has no line rate, so the peer plays it)
 *   health good|warning|error
 *   quit
 * It prints `ready` once the port is open, `cmd NAME` for each request it understood, and exits
 * when the pty goes away (the unplug). Written without the runtime's code: it is the other side.
 */
const [path, roomJson] = process.argv.slice(2);
if (!path) {
  process.stderr.write('usage: rplidar-peer.mjs PTY [ROOM_JSON]\n');
  process.exit(2);
}
let room = { front: 1, back: 1, left: 1, right: 1, ...(roomJson ? JSON.parse(roomJson) : {}) };
let spinning = true;
let wrongBaud = false;
let health = 0;
let scanning = false;
let motorOn = false;
let seed = 1;
const rand = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
};

const port = new SerialPort({ path, baudRate: 115200, autoOpen: false });
const send = (buf) => {
  if (!port.isOpen) return;
  if (!wrongBaud) return port.write(buf);
  // A UART at another rate sees framing errors: other bytes, and not as many.
  const out = [];
  for (const b of buf) if (rand() < 0.7) out.push(((b * 7 + 13) ^ 0x55) & 0xff);
  port.write(Buffer.from(out));
};
const descriptor = (size, mode, type) => {
  const b = Buffer.alloc(7);
  b[0] = 0xa5;
  b[1] = 0x5a;
  b.writeUInt32LE((size & 0x3fffffff) | (mode << 30), 2);
  b[6] = type;
  return b;
};

/** Distance in mm along a clockwise angle from the sensor's zero, to the box's walls. */
function distanceMm(deg) {
  const r = (deg * Math.PI) / 180;
  const f = Math.cos(r);
  const s = Math.sin(r);
  let t = Infinity;
  if (f > 1e-9) t = Math.min(t, room.front / f);
  if (f < -1e-9) t = Math.min(t, room.back / -f);
  if (s > 1e-9) t = Math.min(t, room.right / s);
  if (s < -1e-9) t = Math.min(t, room.left / -s);
  return Math.min(t * 1000, 12000);
}

function revolution() {
  const n = 360;
  const out = Buffer.alloc(n * 5);
  for (let i = 0; i < n; i++) {
    const deg = (i * 360) / n;
    const q6 = Math.round(deg * 64) & 0x7fff;
    const q2 = Math.round(distanceMm(deg) * 4) & 0xffff;
    const start = i === 0 ? 1 : 0;
    const o = i * 5;
    out[o] = (47 << 2) | ((start ^ 1) << 1) | start;
    out[o + 1] = ((q6 & 0x7f) << 1) | 1;
    out[o + 2] = q6 >> 7;
    out.writeUInt16LE(q2, o + 3);
  }
  return out;
}

const ticker = setInterval(() => {
  // A pty whose socat died does not always say so to its reader: the link vanishing is the unplug.
  if (!existsSync(path)) {
    process.stdout.write('unplugged\n');
    quit(0);
    return;
  }
  if ((scanning && spinning) || (wrongBaud && spinning)) send(revolution());
}, 100);

let pending = Buffer.alloc(0);
function onRequest(cmd, payload) {
  const names = { 37: 'STOP', 64: 'RESET', 32: 'SCAN', 80: 'GET_INFO', 82: 'GET_HEALTH', 240: 'SET_MOTOR_PWM', 168: 'MOTOR_SPEED_CTRL' };
  process.stdout.write(`cmd ${names[cmd] ?? cmd.toString(16)}\n`);
  switch (cmd) {
    case 0x25:
      scanning = false;
      return;
    case 0x40:
      scanning = false;
      health = 0;
      port.write('RP LIDAR System.\r\nFirmware Ver 1.29 - rtm, HW Ver 7\r\nModel: 18\r\n');
      return;
    case 0x52: {
      const b = Buffer.alloc(3);
      b[0] = health;
      b.writeUInt16LE(health === 0 ? 0 : 0x8001, 1);
      return send(Buffer.concat([descriptor(3, 0, 0x06), b]));
    }
    case 0x50: {
      const b = Buffer.alloc(20);
      b[0] = 0x18;
      b[1] = 29;
      b[2] = 1;
      b[3] = 7;
      for (let i = 0; i < 16; i++) b[4 + i] = 0xa0 + i;
      return send(Buffer.concat([descriptor(20, 0, 0x04), b]));
    }
    case 0x20:
      scanning = true;
      return send(descriptor(5, 1, 0x81));
    case 0xf0:
    case 0xa8:
      motorOn = payload.readUInt16LE(0) > 0;
      process.stdout.write(`motor ${motorOn ? 'on' : 'off'}\n`);
      return;
    default:
      return;
  }
}

port.on('data', (chunk) => {
  if (wrongBaud) return;
  pending = Buffer.concat([pending, chunk]);
  for (;;) {
    const i = pending.indexOf(0xa5);
    if (i < 0) {
      pending = Buffer.alloc(0);
      return;
    }
    if (pending.length < i + 2) return;
    const cmd = pending[i + 1];
    if (cmd >= 0x80) {
      if (pending.length < i + 3) return;
      const size = pending[i + 2];
      if (pending.length < i + 4 + size) return;
      onRequest(cmd, pending.subarray(i + 3, i + 3 + size));
      pending = pending.subarray(i + 4 + size);
    } else {
      onRequest(cmd, Buffer.alloc(0));
      pending = pending.subarray(i + 2);
    }
  }
});
const quit = (code) => {
  clearInterval(ticker);
  if (port.isOpen) port.close(() => process.exit(code));
  else process.exit(code);
};
port.on('close', () => {
  process.stdout.write('unplugged\n');
  quit(0);
});
port.on('error', () => quit(0));
port.open((err) => {
  if (err) {
    process.stderr.write(`cannot open ${path}: ${err.message}\n`);
    process.exit(1);
  }
  process.stdout.write('ready\n');
});

createInterface({ input: process.stdin }).on('line', (text) => {
  const [word, ...rest] = text.trim().split(/\s+/);
  const arg = rest.join(' ');
  if (word === 'room') room = { ...room, ...JSON.parse(arg) };
  else if (word === 'garbage') {
    const n = Number(arg) || 100;
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) b[i] = Math.floor(rand() * 256);
    port.write(b);
  } else if (word === 'spin') spinning = arg !== 'off';
  else if (word === 'baud') wrongBaud = arg === 'wrong';
  else if (word === 'health') health = arg === 'error' ? 2 : arg === 'warning' ? 1 : 0;
  else if (word === 'quit') quit(0);
  process.stdout.write(`ok ${word}\n`);
});
