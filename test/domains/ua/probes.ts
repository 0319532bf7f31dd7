/** Probes of the ua domain for the executable test (test/build/probes.ts): the detection data is inside. */
import { expect } from 'bun:test'
import type { Probe } from '../../build/probes.ts'

export const probes: Probe[] = [
  // OpenAI documents GPTBot's user agent; Matomo's data names its producer.
  {
    method: 'POST',
    path: '/api/v1/ua',
    body: { ua: 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)' },
    check: (b) => {
      expect(b.bot.name).toBe('GPTBot')
      expect(b.bot.producer).toMatch(/OpenAI/)
    },
  },
  // A Client Hints case: the model comes from Sec-CH-UA-Model (Pixel 8 is Google's).
  {
    method: 'POST',
    path: '/api/v1/ua',
    body: {
      ua: 'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36',
      headers: { 'Sec-CH-UA-Model': '"Pixel 8"', 'Sec-CH-UA-Platform': '"Android"' },
    },
    check: (b) => expect(b.device).toMatchObject({ brand: 'Google', model: 'Pixel 8' }),
  },
]
