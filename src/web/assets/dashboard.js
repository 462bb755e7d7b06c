// Pet Service dashboard: progressive enhancements only. Every form works without this file.
;(() => {
  // Copy buttons: <button data-copy="ID" hidden> copies the text of element #ID.
  for (const button of document.querySelectorAll('button[data-copy]')) {
    button.hidden = false
    button.addEventListener('click', async () => {
      const source = document.getElementById(button.dataset.copy)
      if (!source) return
      const text = 'value' in source ? source.value : source.textContent
      try {
        await navigator.clipboard.writeText(text.trim())
      } catch {
        // Outside a secure context the Clipboard API is missing: select the text instead.
        const range = document.createRange()
        range.selectNodeContents(source)
        const selection = window.getSelection()
        selection.removeAllRanges()
        selection.addRange(range)
        document.execCommand('copy')
      }
      const label = button.textContent
      button.textContent = 'Copied'
      button.dataset.copied = ''
      setTimeout(() => {
        button.textContent = label
        delete button.dataset.copied
      }, 1600)
    })
  }

  // Password strength meter: a hint as you type. The server decides, with zxcvbn-ts and its
  // dictionaries (src/accounts/password-strength.ts), too large to send here; this knows the
  // pattern dictionary attacks try first: one word, then digits and symbols ("Summer2024!").
  const oneWordThenDigits = /^[A-Za-z][a-z]+[^A-Za-z]+$/
  const common =
    /^(p[a@4][s$5]{2}w[o0]rd|qwert|asdf|letmein|welcome|iloveyou|admin|monkey|dragon|abc123|123)/i
  const score = (p) => {
    let classes = 0
    for (const re of [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9]/]) if (re.test(p)) classes++
    const unique = new Set(p).size
    let s = 0
    if (p.length >= 10) s++
    if (p.length >= 14) s++
    if (p.length >= 18 || classes >= 3) s++
    if (unique >= 8 && (classes >= 3 || p.length >= 20)) s++
    return oneWordThenDigits.test(p) || common.test(p) ? Math.min(s, 1) : s
  }
  const words = ['Too short', 'Weak', 'Fair', 'Good', 'Strong']
  for (const input of document.querySelectorAll('input[data-strength]')) {
    const meter = document.getElementById(input.dataset.strength)
    const text = document.getElementById(`${input.dataset.strength}-text`)
    if (!meter || !text) continue
    input.addEventListener('input', () => {
      meter.hidden = input.value === ''
      const s = input.value.length < 10 ? 0 : score(input.value)
      meter.className = `meter s${input.value === '' ? 0 : Math.max(1, s)}`
      text.textContent = input.value === '' ? '' : `Strength: ${words[s]}`
    })
  }

  // Code example tabs: [data-tabs] holds [data-tab] panels; without JS they simply stack.
  for (const group of document.querySelectorAll('[data-tabs]')) {
    const panels = [...group.querySelectorAll('[data-tab]')]
    const list = document.createElement('div')
    list.className = 'tabs'
    list.setAttribute('role', 'tablist')
    const buttons = panels.map((panel, i) => {
      const b = document.createElement('button')
      b.type = 'button'
      b.textContent = panel.dataset.tab
      b.id = `${panel.id}-tab`
      b.setAttribute('role', 'tab')
      b.setAttribute('aria-controls', panel.id)
      panel.setAttribute('role', 'tabpanel')
      panel.setAttribute('aria-labelledby', b.id)
      const heading = panel.querySelector('h3')
      if (heading) heading.classList.add('visually-hidden')
      b.addEventListener('click', () => select(i))
      b.addEventListener('keydown', (e) => {
        if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
          const next = (i + (e.key === 'ArrowRight' ? 1 : panels.length - 1)) % panels.length
          select(next)
          buttons[next].focus()
        }
      })
      list.append(b)
      return b
    })
    const select = (n) => {
      panels.forEach((panel, i) => {
        panel.hidden = i !== n
        buttons[i].setAttribute('aria-selected', String(i === n))
        buttons[i].tabIndex = i === n ? 0 : -1
      })
    }
    group.prepend(list)
    select(0)
  }

  // Destructive buttons may ask once more (the confirmation pages already ask without JS).
  for (const form of document.querySelectorAll('form[data-confirm]')) {
    form.addEventListener('submit', (e) => {
      if (!window.confirm(form.dataset.confirm)) e.preventDefault()
    })
  }
})()
