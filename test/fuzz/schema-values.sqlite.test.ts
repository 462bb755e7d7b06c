import fc from 'fast-check'
import { expect, it } from 'vitest'
import { type OpenApiDocument, schemaValue } from './openapi-requests.ts'

/**
 * The fuzzers' value generator on the schema shapes TypeBox writes for unions and literals
 * (`anyOf`, `oneOf`, `const`): well-formed values come from the branches only, never from "any
 * JSON value" (which once drew a null-prototype object for a query parameter and crashed).
 */
const doc = { paths: {}, components: { schemas: {} } } as unknown as OpenApiDocument
const wellFormed = { hostile: false, known: {} }

it('draws a union member from one of its branches', () => {
  const union = {
    anyOf: [
      { type: 'string', enum: ['asc', 'desc'] },
      { type: 'integer', minimum: 1, maximum: 3 },
    ],
  }
  for (const value of fc.sample(schemaValue(union, doc, wellFormed), 200))
    expect(['asc', 'desc', 1, 2, 3]).toContain(value)
})

it('draws a literal as itself, and a oneOf like an anyOf', () => {
  const literal = { oneOf: [{ const: 'pet.created' }, { const: 'pet.updated' }] }
  const values = new Set(fc.sample(schemaValue(literal, doc, wellFormed), 200))
  expect([...values].sort()).toEqual(['pet.created', 'pet.updated'])
})
