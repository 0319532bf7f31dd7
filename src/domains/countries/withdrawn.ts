/**
 * Successors of withdrawn codes: the part of the history that the iso-codes JSON does not state.
 *
 * Countries: ISO 3166-3 gives each former country a four-letter code whose last two letters are the
 * successor's alpha-2 — unless the country split or merged (`HH`), its code passed on (`XX`), or only its
 * alpha-3 changed (`AA`). The builder reads the plain cases off the code; these are the others.
 *
 * Subdivisions: iso-codes ships no change history, so this table records code changes between the
 * iso-codes 4.15.0 and 4.20.1 JSON files (removed codes whose successor has the same name in the same
 * country were matched mechanically; splits and merges were checked against the ISO 3166-2 change
 * notices), plus the best-known older change MX-DIF -> MX-CMX (ISO 3166-2 newsletter of 2016-11-15,
 * Mexico City). A removed code without a known successor is listed with none, so it still answers as
 * "withdrawn" rather than "never existed". Changing this table changes the artifact: bump the builder
 * revision in build.ts.
 */

/** ISO 3166-3 four-letter code -> successor alpha-2 codes, where the last two letters do not say. */
export const COUNTRY_SUCCESSORS: Record<string, string[]> = {
  ANHH: ['BQ', 'CW', 'SX'], // Netherlands Antilles, dissolved 2010
  BYAA: ['BY'], // Byelorussian SSR: alpha-2 kept, alpha-3 BYS became BLR
  CSHH: ['CZ', 'SK'], // Czechoslovakia
  CSXX: ['RS', 'ME'], // Serbia and Montenegro
  FQHH: ['AQ', 'TF'], // "now split between AQ and TF" (iso-codes comment)
  GEHH: ['KI', 'TV'], // "now split into Kiribati and Tuvalu" (iso-codes comment)
  NTHH: ['IQ', 'SA'], // Neutral Zone, "formerly between Saudi Arabia and Iraq" (iso-codes comment)
  PCHH: ['FM', 'MH', 'MP', 'PW'], // "divided into FM, MH, MP, and PW" (iso-codes comment)
  // USSR: the republics that received new codes when it dissolved (BY and UA already had their own).
  SUHH: ['AM', 'AZ', 'EE', 'GE', 'KG', 'KZ', 'LT', 'LV', 'MD', 'RU', 'TJ', 'TM', 'UZ'],
}

export interface SubdivisionChange {
  code: string
  name: string
  /** When the code left the standard (ISO date), or the iso-codes releases between which it did. */
  withdrawn: string
  successors: string[]
}

const BETWEEN = 'iso-codes 4.15.0..4.20.1'
const renames = (pairs: string, withdrawn = BETWEEN): SubdivisionChange[] =>
  pairs
    .trim()
    .split(/\s*\n\s*/)
    .map((line) => {
      const [code, to, ...name] = line.split(/\s+/)
      return { code: code!, name: name.join(' '), withdrawn, successors: to === '-' ? [] : to!.split(',') }
    })

/** Format per line: old code, successor codes (comma-separated, `-` for none), old name. */
export const SUBDIVISION_CHANGES: SubdivisionChange[] = [
  ...renames('MX-DIF MX-CMX Distrito Federal', '2016-11-15'),
  ...renames(`
    FR-75 FR-75C Paris
    FR-GF FR-973 Guyane (française)
    FR-GP FR-971 Guadeloupe
    FR-MQ FR-972 Martinique
    FR-RE FR-974 La Réunion
    FR-YT FR-976 Mayotte
    GB-NTH GB-NNH,GB-WNH Northamptonshire
    GT-AV GT-16 Alta Verapaz
    GT-BV GT-15 Baja Verapaz
    GT-CM GT-04 Chimaltenango
    GT-CQ GT-20 Chiquimula
    GT-ES GT-05 Escuintla
    GT-GU GT-01 Guatemala
    GT-HU GT-13 Huehuetenango
    GT-IZ GT-18 Izabal
    GT-JA GT-21 Jalapa
    GT-JU GT-22 Jutiapa
    GT-PE GT-17 Petén
    GT-PR GT-02 El Progreso
    GT-QC GT-14 Quiché
    GT-QZ GT-09 Quetzaltenango
    GT-RE GT-11 Retalhuleu
    GT-SA GT-03 Sacatepéquez
    GT-SM GT-12 San Marcos
    GT-SO GT-07 Sololá
    GT-SR GT-06 Santa Rosa
    GT-SU GT-10 Suchitepéquez
    GT-TO GT-08 Totonicapán
    GT-ZA GT-19 Zacapa
    IN-CT IN-CG Chhattīsgarh
    IN-OR IN-OD Odisha
    IN-TG IN-TS Telangāna
    IN-UT IN-UK Uttarākhand
    IS-AKH IS-SKR Akrahreppur
    IS-SSF IS-SKR Sveitarfélagið Skagafjörður
    IS-BLO IS-HUG Blönduósbær
    IS-HUT IS-HUG Húnavatnshreppur
    IS-BFJ IS-MUL Borgarfjarðarhreppur
    IS-DJU IS-MUL Djúpavogshreppur
    IS-FLD IS-MUL Fljótsdalshérað
    IS-SEY IS-MUL Seyðisfjarðarkaupstaður
    IS-HEL - Helgafellssveit
    IS-SBH IS-LAN Svalbarðshreppur
    IS-SKU IS-THG Skútustaðahreppur
    KZ-AKM KZ-11 Akmolinskaja oblast'
    KZ-AKT KZ-15 Aktjubinskaja oblast'
    KZ-ALA KZ-75 Almaty
    KZ-ALM KZ-19 Almatinskaja oblast'
    KZ-AST KZ-71 Nur-Sultan
    KZ-ATY KZ-23 Atyrauskaja oblast'
    KZ-KAR KZ-35 Karagandinskaja oblast'
    KZ-KUS KZ-39 Kostanajskaja oblast'
    KZ-KZY KZ-43 Kyzylordinskaja oblast'
    KZ-MAN KZ-47 Mangghystaū oblysy
    KZ-PAV KZ-55 Pavlodar oblysy
    KZ-SEV KZ-59 Severo-Kazahstanskaja oblast'
    KZ-SHY KZ-79 Shymkent
    KZ-VOS KZ-63 Shyghys Qazaqstan oblysy
    KZ-YUZ KZ-61 Turkestankaya oblast'
    KZ-ZAP KZ-27 Batys Qazaqstan oblysy
    KZ-ZHA KZ-31 Zhambyl oblysy
    LV-JKB LV-042 Jēkabpils
    LV-001 - Aglonas novads
    LV-003 - Aizputes novads
    LV-004 - Aknīstes novads
    LV-005 - Alojas novads
    LV-006 - Alsungas novads
    LV-008 - Amatas novads
    LV-009 - Apes novads
    LV-010 - Auces novads
    LV-012 - Babītes novads
    LV-013 - Baldones novads
    LV-014 - Baltinavas novads
    LV-017 - Beverīnas novads
    LV-018 - Brocēnu novads
    LV-019 - Burtnieku novads
    LV-020 - Carnikavas novads
    LV-021 - Cesvaines novads
    LV-023 - Ciblas novads
    LV-024 - Dagdas novads
    LV-025 - Daugavpils novads
    LV-027 - Dundagas novads
    LV-028 - Durbes novads
    LV-029 - Engures novads
    LV-030 - Ērgļu novads
    LV-031 - Garkalnes novads
    LV-032 - Grobiņas novads
    LV-034 - Iecavas novads
    LV-035 - Ikšķiles novads
    LV-036 - Ilūkstes novads
    LV-037 - Inčukalna novads
    LV-038 - Jaunjelgavas novads
    LV-039 - Jaunpiebalgas novads
    LV-040 - Jaunpils novads
    LV-043 - Kandavas novads
    LV-044 - Kārsavas novads
    LV-045 - Kocēnu novads
    LV-046 - Kokneses novads
    LV-048 - Krimuldas novads
    LV-049 - Krustpils novads
    LV-051 - Ķeguma novads
    LV-053 - Lielvārdes novads
    LV-055 - Līgatnes novads
    LV-057 - Lubānas novads
    LV-060 - Mazsalacas novads
    LV-061 - Mālpils novads
    LV-063 - Mērsraga novads
    LV-064 - Naukšēnu novads
    LV-065 - Neretas novads
    LV-066 - Nīcas novads
    LV-069 - Ozolnieku novads
    LV-070 - Pārgaujas novads
    LV-071 - Pāvilostas novads
    LV-072 - Pļaviņu novads
    LV-074 - Priekules novads
    LV-075 - Priekuļu novads
    LV-076 - Raunas novads
    LV-078 - Riebiņu novads
    LV-079 - Rojas novads
    LV-081 - Rucavas novads
    LV-082 - Rugāju novads
    LV-083 - Rundāles novads
    LV-084 - Rūjienas novads
    LV-085 - Salas novads
    LV-086 - Salacgrīvas novads
    LV-090 - Sējas novads
    LV-092 - Skrīveru novads
    LV-093 - Skrundas novads
    LV-095 - Stopiņu novads
    LV-096 - Strenču novads
    LV-098 - Tērvetes novads
    LV-100 - Vaiņodes novads
    LV-103 - Vārkavas novads
    LV-104 - Vecpiebalgas novads
    LV-105 - Vecumnieku novads
    LV-107 - Viesītes novads
    LV-108 - Viļakas novads
    LV-109 - Viļānu novads
    LV-110 - Zilupes novads
    LV-VMR LV-113 Valmiera
    NP-1 - Central
    NP-2 - Mid Western
    NP-3 - Western
    NP-4 - Eastern
    NP-5 - Far Western
    NP-BA NP-P3 Bagmati
    NP-GA NP-P4 Gandaki
    NP-KA NP-P6 Karnali
    NP-LU NP-P5 Lumbini
    NP-BH - Bheri
    NP-DH - Dhawalagiri
    NP-JA - Janakpur
    NP-KO - Kosi
    NP-MA - Mahakali
    NP-ME - Mechi
    NP-NA - Narayani
    NP-RA - Rapti
    NP-SA - Sagarmatha
    NP-SE - Seti
    PH-MAG PH-MGN,PH-MGS Maguindanao
  `),
]
