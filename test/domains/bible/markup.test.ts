/** Markup stripping on real fragments of the modules' markup (OSIS, GBF, USFM, USFX). */
import { describe, expect, test } from 'bun:test'
import { stripGbf, stripOsis, stripUsfm, stripUsfx } from '../../../src/domains/bible/markup.ts'

describe('OSIS', () => {
  test("Strong's words keep their text; study notes go with their content", () => {
    const raw =
      '<w lemma="strong:H0776">And the whole earth</w> <w lemma="strong:H0259">was of one</w> <w lemma="strong:H08193">language</w>, <w ' +
      'lemma="strong:H0259">and of one</w> <w lemma="strong:H01697">speech</w>.<note type="study"><catchWord>language</catchWord>: ' +
      'Heb. <rdg type="x-literal">lip.</rdg></note><note type="study"><catchWord>speech</catchWord>: Heb. <rdg ' +
      'type="x-literal">words</rdg></note>'
    expect(stripOsis(raw)).toBe('And the whole earth was of one language, and of one speech.')
  })
  test('a note between two words leaves them apart; before punctuation it leaves nothing', () => {
    expect(stripOsis('Et il arriva que lorsqu’ils partirent de<note n="b">ou : vers.</note> l’orient')).toBe(
      'Et il arriva que lorsqu’ils partirent de l’orient',
    )
    expect(stripOsis('et <w>vide</w><note n="a">le vide<hi type="italic">.</hi></note>, et il y avait')).toBe('et vide, et il y avait')
    expect(stripOsis('word<note>x</note>word')).toBe('word word')
  })
  test('milestones, paragraphs, titles and entities', () => {
    expect(
      stripOsis(
        '<div type="x-milestone" subType="x-preverse" sID="pv1"/><div sID="gen11" type="x-p"/> <div eID="pv1"/> Et la <w>terre</w>  <div ' +
          'eID="gen11" type="x-p"/>',
      ),
    ).toBe('Et la terre')
    expect(stripOsis('<title>The Creation</title>In the beginning')).toBe('In the beginning')
    // A canonical Psalm title is scripture (verse 1 itself in the German versification).
    expect(stripOsis('<title canonical="true" type="psalm">A Psalm of David.</title>LORD, how are they increased')).toBe(
      'A Psalm of David. LORD, how are they increased',
    )
    // Markup escaped as text in the upstream module is markup once decoded.
    expect(stripOsis('Хима&lt;note&gt;Созвездия.&lt;/note&gt; и тайники юга;')).toBe('Хима и тайники юга;')
    expect(stripOsis('pahasta, &lt;FO&gt;sillä sinun on valtakunta&lt;Fo&gt;')).toBe('pahasta, sillä sinun on valtakunta')
    expect(stripOsis('Fish &amp; loaves &lt;here&gt; &#8212; done')).toBe('Fish & loaves <here> — done')
    expect(stripOsis('line one<lb/>line two')).toBe('line one line two')
  })
})

describe('GBF', () => {
  test('footnotes and titles dropped, italics and paragraph marks gone', () => {
    expect(stripGbf('the earth hath existed waste and void, and darkness <FI>is<Fi> on the face of the deep,<CM>')).toBe(
      'the earth hath existed waste and void, and darkness is on the face of the deep,',
    )
    expect(stripGbf('Hear<RF>Or, listen<Rf> me <TS>Title<Ts>now')).toBe('Hear me now')
  })
})

describe('USFM', () => {
  test('footnotes and cross-references dropped; \\w attributes and character markers gone', () => {
    expect(stripUsfm('who in the days of Enemessar\\f + \\fr 1:2  \\ft That is, \\fqa Shalmaneser. \\f* king of the Assyrians')).toBe(
      'who in the days of Enemessar king of the Assyrians',
    )
    expect(stripUsfm('\\wj I am the way\\wj* said \\w Jesus|strong="G2424"\\w*\\x - \\xo 14:6 \\xt John 1:1\\x*.')).toBe(
      'I am the way said Jesus.',
    )
    expect(stripUsfm('first line \\q2 second line \\qs Selah.\\qs*')).toBe('first line second line Selah.')
  })
})

describe('USFX', () => {
  test('notes and references dropped', () => {
    expect(stripUsfx('起初神創造天地。<f caller="+">note</f>')).toBe('起初神創造天地。')
    expect(stripUsfx('a<x>ref</x> b <wj>c</wj>')).toBe('a b c')
  })
})

describe('gaps left by dropped notes', () => {
  test('a note after sentence punctuation keeps the next word apart; none is added around brackets, quotes or CJK', () => {
    expect(stripUsfm('the great suffering.\\f + \\fr 7:14  \\ft or, oppression\\f*They washed')).toBe('the great suffering. They washed')
    expect(stripOsis('he said:<note>n</note>“Come')).toBe('he said: “Come')
    expect(stripOsis('(<note>n</note>these were')).toBe('(these were')
    expect(stripOsis('“<note>n</note>Come')).toBe('“Come')
    expect(stripOsis('word<note>n</note>” and')).toBe('word” and')
    expect(stripUsfx('天地。<f>note</f>地是空虛')).toBe('天地。地是空虛')
    expect(stripUsfx('神<f>note</f>的靈')).toBe('神的靈')
  })
})

test('a note inside a canonical Psalm title goes; the title stays (Darby, Psalm 90)', () => {
  expect(
    stripOsis(
      '<title canonical="true" type="psalm">A Prayer of Moses, the man of<note placement="foot"><reference type="annotateRef">90.0 ' +
        '</reference>Elohim</note>God.</title>Lord, thou hast been',
    ),
  ).toBe('A Prayer of Moses, the man of God. Lord, thou hast been')
})
