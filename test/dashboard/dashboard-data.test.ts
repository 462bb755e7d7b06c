import { beforeAll, expect, it } from 'vitest'
import { basic, useTestApp } from '../helpers/app.ts'
import { SessionClient } from '../helpers/dashboard-session.ts'
import { describeDb } from '../helpers/database.ts'

describeDb('dashboard pets and users pages', () => {
  let session: SessionClient
  let ownerId = ''
  const petIds: number[] = []

  const api = (method: 'POST', url: string, payload: Record<string, unknown>, apiKey: string) =>
    t.app.inject({ method, url, payload, headers: { authorization: basic(apiKey) } })

  const t = useTestApp()
  beforeAll(async () => {
    session = new SessionClient(t.app)
    await session.signUp(`data-${Date.now()}@example.com`)
    const key = await session.createKey('Data loader')
    ownerId = (
      (await api('POST', '/v1/user', { name: 'Marie Curie', email: 'marie@example.com' }, key)).json() as {
        id: string
      }
    ).id
    for (let i = 1; i <= 25; i++) {
      const pet = await api(
        'POST',
        '/v1/pet',
        {
          name: `Pet ${String(i).padStart(2, '0')}`,
          species: i % 5 === 0 ? 'cat' : 'dog',
          status: i % 10 === 0 ? 'sold' : 'available',
          ...(i <= 3 ? { owner_id: ownerId } : {}),
        },
        key,
      )
      expect(pet.statusCode).toBe(201)
      petIds.push((pet.json() as { id: number }).id)
    }
  })

  const names = (body: string) => [...body.matchAll(/<strong>(Pet \d+)<\/strong>/g)].map((m) => m[1])

  it('pages through pets twenty at a time, newest first, and back', async () => {
    const first = await session.get('/dashboard/pets')
    expect(names(first.body)).toHaveLength(20)
    expect(names(first.body)[0]).toBe('Pet 25')
    const older = /href="([^"]*starting_after=[^"]*)"/.exec(first.body)?.[1]?.replaceAll('&amp;', '&')
    expect(older).toBeDefined()
    const second = await session.get(older!)
    expect(names(second.body)).toEqual(['Pet 05', 'Pet 04', 'Pet 03', 'Pet 02', 'Pet 01'])
    expect(second.body).toMatch(/aria-disabled="true">Older/)
    const newer = /href="([^"]*ending_before=[^"]*)"/.exec(second.body)?.[1]?.replaceAll('&amp;', '&')
    const back = await session.get(newer!)
    expect(names(back.body)).toEqual(names(first.body))
  })

  it('filters pets by status, species and owner, and shows the counts by status', async () => {
    expect(names((await session.get('/dashboard/pets?status=sold')).body)).toEqual(['Pet 20', 'Pet 10'])
    expect(names((await session.get('/dashboard/pets?species=cat')).body)).toEqual([
      'Pet 25',
      'Pet 20',
      'Pet 15',
      'Pet 10',
      'Pet 05',
    ])
    expect(names((await session.get(`/dashboard/pets?owner=${ownerId}`)).body)).toEqual([
      'Pet 03',
      'Pet 02',
      'Pet 01',
    ])
    const overview = await session.get('/dashboard')
    expect(overview.body).toContain('data-testid="count-total">25<')
    expect(overview.body).toContain('data-testid="count-sold">2<')
    expect(overview.body).toContain('data-testid="count-available">23<')
  })

  it('shows a pet and a user in detail, and answers 404 for unknown ones', async () => {
    const pet = await session.get(`/dashboard/pets/${petIds[0]}`)
    expect(pet.statusCode).toBe(200)
    expect(pet.body).toContain('Marie Curie')
    const user = await session.get(`/dashboard/users/${ownerId}`)
    expect(user.body).toContain('marie@example.com')
    expect(
      names(user.body.replaceAll(/<a href="\/dashboard\/pets\/\d+">(Pet \d+)<\/a>/g, '<strong>$1</strong>')),
    ).toEqual(['Pet 03', 'Pet 02', 'Pet 01'])
    expect((await session.get('/dashboard/pets/999999999')).statusCode).toBe(404)
    expect((await session.get('/dashboard/pets/not-a-number')).statusCode).toBe(404)
    expect((await session.get('/dashboard/users/usr_nope')).statusCode).toBe(404)
    const users = await session.get('/dashboard/users?email=marie%40example.com')
    expect(users.body).toContain('Marie Curie')
  })

  it('escapes what the API stored, so a pet name cannot inject markup', async () => {
    const key = await session.createKey('Escaping')
    const res = await api(
      'POST',
      '/v1/pet',
      { name: '<script>alert(1)</script>', species: '"><img src=x>' },
      key,
    )
    const id = (res.json() as { id: number }).id
    const page = await session.get(`/dashboard/pets/${id}`)
    expect(page.body).not.toContain('<script>alert(1)</script>')
    expect(page.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
    expect(page.body).not.toContain('"><img src=x>')
  })
})
