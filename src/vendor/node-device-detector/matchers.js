// Almanac: the engine's regexes are not compiled here with `new RegExp` on every call but by matchers the
// embedding code hands in (DeviceDetector's `matchers` option; Almanac's are src/domains/ua/prefilter.ts:
// compiled once, with a literal prefilter). The parsers call them through this object, so the vendored
// code reaches into nothing outside its own folder.
const NAMES = ['baseMatcher', 'userAgentMatcher', 'fixedRegExp', 'listIndex', 'keyIndex'];

function missing() {
  throw new Error('detection matchers are missing: pass DeviceDetector the `matchers` option');
}

const matchers = { setMatchers };
for (const name of NAMES) matchers[name] = missing;

function setMatchers(given) {
  for (const name of NAMES) {
    if (typeof given[name] !== 'function') throw new Error(`detection matchers: ${name} is missing`);
    matchers[name] = given[name];
  }
}

module.exports = matchers;
