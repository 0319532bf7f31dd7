const matchers = require('../matchers'); // Almanac: compiled, prefiltered regexes (matchers.js)
const ParserAbstract = require('./abstract-parser');
const IndexerClient = require('./client/indexer-client');

class ClientAbstractParser extends ParserAbstract {

  #clientIndexes = true;

  constructor() {
    super();
    this.collectionLength = 0;
    this.type = '';
  }
  
  get clientIndexes() {
    return this.#clientIndexes;
  }
  
  set clientIndexes(stage) {
    this.#clientIndexes = stage;
  }

  // Almanac: see ParserAbstract.indexes.
  indexes() {
    return [() => matchers.listIndex(this.collection)];
  }
  
  /**
   * @param {string} userAgent
   * @param {ResultClientHints} clientHintData
   * @returns {ResultClient|null}
   */
  parse(userAgent, clientHintData) {
    if (!userAgent) {
      return null;
    }

    const ua = this.prepareUserAgent(userAgent);

    // scan indexes
    if (this.clientIndexes) {
     let result = this.parseUserAgentByPositions(ua);
      if (result !== null) {
        return result;
      }
    }
    
    // full scan (Almanac: only the entries whose literals occur in the user agent, in list order, each with its Matcher)
    const index = matchers.listIndex(this.collection);
    const candidates = index.candidates(ua);
    for (let c = 0, l = candidates.length; c < l && candidates[c] < this.collectionLength; c++) {
      let result = this.parseUserAgentByPosition(ua, candidates[c], index.matchers[candidates[c]]);
      if (result !== null) {
        return result;
      }
    }

    return null;
  }
  
  parseUserAgentByPositions(userAgent) {
    const positions = IndexerClient.findClientRegexPositionsForUserAgent(
      userAgent,
      String(this.type),
    );
    if (positions !== null && positions.length) {
      for (let i = 0, l = positions.length; i < l; i++) {
        let result = this.parseUserAgentByPosition(userAgent, positions[i]);
        if (result !== null) {
          return result;
        }
      }
    }
    return null;
  }
  
  /**
   * Inline parse userAgent by position collection
   *
   * @param {String} userAgent
   * @param {Number} position
   * @param {*} matcher - Almanac: the entry's Matcher when the caller has it (from matchers.listIndex)
   * @returns {{name: (string|*), type: string, version: string}|null}
   */
  parseUserAgentByPosition(userAgent, position = 0, matcher = null) {
    let item = this.collection[position];
    
    if (item === void 0) {
      return null;
    }
    
    let regex = matcher || this.getBaseRegExp(item.regex);
    let match = regex.exec(userAgent);
    
    if (match !== null) {
      return {
        type: String(this.type),
        name: this.buildByMatch(item.name, match),
        version: this.buildVersion(item.version, match),
      };
    }
    
    return null;
  }
}

module.exports = ClientAbstractParser;
