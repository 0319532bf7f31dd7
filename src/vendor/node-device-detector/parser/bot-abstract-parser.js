const matchers = require('../matchers'); // Almanac: compiled, prefiltered regexes (matchers.js)
const ParserAbstract = require('./abstract-parser');

class BotAbstractParser extends ParserAbstract {
  constructor() {
    super();
    this.collection = require('../data').collection('bots');
  }

  // Almanac: see ParserAbstract.indexes.
  indexes() {
    return [() => matchers.listIndex(this.collection)];
  }

  /**
   * parse user agent is bot
   * @param {string} userAgent
   * @param {*} clientHintData
   * @returns {{name: string, producer: {}, category: string, url: string}|null}
   */
  parse(userAgent, clientHintData) {
    // Almanac: only the entries whose literals occur in the user agent, in list order, each with its Matcher.
    const index = matchers.listIndex(this.collection);
    const candidates = index.candidates(userAgent);
    for (let c = 0, l = candidates.length; c < l; c++) {
      let item = this.collection[candidates[c]];
      let regex = index.matchers[candidates[c]];
      let match = regex.exec(userAgent);

      if (match !== null) {
        let producer = item.producer ? item.producer : {};
        if (producer.name === null) {
          producer.name = '';
        }

        return {
          name: item.name ? this.buildByMatch(item.name, match) : '',
          category: item.category ? item.category : '',
          url: item.url ? item.url : '',
          producer: producer
        };
      }
    }
    return null;
  }
}

module.exports = BotAbstractParser;
