export function setCollections(data: Record<string, unknown>): void
export function collection(name: string): unknown
