// Distinct sounds made with Web Audio (no file to fetch): each banner kind has its own short pattern, so staff
// can tell from across the kitchen what happened. Browsers allow sound after a user gesture (unlock()).
// Every sound played (or wanted while audio is still locked) is counted in document.body.dataset.chimes and, in test
// mode (?test=1), listed in window.__orderhubSounds for browser tests.

// [frequency Hz, start s, length s] per note, and the wave.
const PATTERNS = {
  new: { wave: 'sine', notes: [[660, 0, 0.16], [990, 0.18, 0.16]] },
  problem: { wave: 'square', notes: [[880, 0, 0.16], [660, 0.18, 0.16], [880, 0.36, 0.16], [660, 0.54, 0.16]] },
  cancelled: { wave: 'sawtooth', notes: [[784, 0, 0.2], [587, 0.22, 0.2], [392, 0.44, 0.4]] },
  at_pick_up: { wave: 'triangle', notes: [[988, 0, 0.25], [740, 0.3, 0.35], [988, 0.8, 0.25], [740, 1.1, 0.35]] },
  timed_out: { wave: 'square', notes: [[440, 0, 0.3], [330, 0.35, 0.5]] },
  awaiting: { wave: 'sine', notes: [[1047, 0, 0.12], [1047, 0.16, 0.12], [1319, 0.32, 0.3]] },
  pos_down: { wave: 'square', notes: [[220, 0, 0.5], [196, 0.6, 0.7]] },
  pos_back: { wave: 'sine', notes: [[523, 0, 0.15], [659, 0.16, 0.15], [784, 0.32, 0.3]] },
};

const testMode = new URLSearchParams(location.search).get('test') === '1';
if (testMode) window.__orderhubSounds = [];

let audio = null;

export function unlock() {
  if (!audio && window.AudioContext) audio = new AudioContext();
  if (audio && audio.state === 'suspended') audio.resume();
}

export function kinds() {
  return Object.keys(PATTERNS);
}

export function play(kind) {
  const pattern = PATTERNS[kind] || PATTERNS.new;
  document.body.dataset.chimes = String(Number(document.body.dataset.chimes || 0) + 1);
  if (testMode) {
    window.__orderhubSounds.push({ kind, at: Date.now() });
    if (window.__orderhubSounds.length > 200) window.__orderhubSounds.shift();
  }
  if (!audio) return;
  for (const [f, start, length] of pattern.notes) {
    const o = audio.createOscillator();
    const g = audio.createGain();
    o.frequency.value = f;
    o.type = pattern.wave;
    const t = audio.currentTime + start;
    g.gain.setValueAtTime(0.0001, t);
    g.gain.exponentialRampToValueAtTime(0.4, t + 0.02);
    g.gain.exponentialRampToValueAtTime(0.0001, t + length);
    o.connect(g).connect(audio.destination);
    o.start(t);
    o.stop(t + length + 0.01);
  }
}
