// Almanac: the detection data is not read from this package's `regexes/` folder but handed in at run
// time (the `ua` dataset artifact, or an operator's newer copy): parsers ask for their collection here.
let collections = null;

function setCollections(data) {
  collections = data;
}

function collection(name) {
  if (!collections || !Object.prototype.hasOwnProperty.call(collections, name)) {
    throw new Error(`detection data: collection ${name} is missing`);
  }
  return collections[name];
}

module.exports = { setCollections, collection };
