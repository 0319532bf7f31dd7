/** The ip domain's artifact names, in one place its build and its service both import (the service never loads the build). */
export const CITY_ARTIFACT = 'ip-city.mmdb'
export const ASN_ARTIFACT = 'ip-asn.tables'
export const LISTS_ARTIFACT = 'ip-lists.tables'
