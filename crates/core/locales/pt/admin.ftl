# As páginas do operador em /admin em português do Brasil
# (`[i18n] operator_locale`). Os nomes de status, canal, tipo e resultado
# aparecem traduzidos; links, filtros e formulários mantêm a palavra
# guardada.

## Todas as páginas

admin-site = administração do digestd
admin-footer = digestd · páginas do operador
admin-nav-status = Status
admin-nav-requests = Solicitações
admin-nav-subscribers = Assinantes
admin-nav-grid = Grade
admin-signed-in = conectado com o token { $token }
admin-logout = Sair
admin-not-done = Não feito
admin-back = Voltar
admin-filter = Filtrar
admin-yes = sim
admin-no = não

## Login

admin-login = Login do operador
admin-login-token = Token de administração
admin-login-note = Um token de API com escopo admin ({ $command }). Ele é trocado por um cookie de sessão; o próprio token não fica guardado no navegador.
admin-login-button = Entrar
admin-login-bad = Esse não é um token de administração válido. Nada foi alterado.
admin-login-many = Muitas tentativas de login com falha a partir desta rede: tente de novo em 15 minutos. Nada foi verificado.
admin-login-expired = Este formulário expirou: digite o token de novo. Nada foi verificado.

## Status

admin-status-at = Status em { $now }
admin-queue = Fila
admin-th-status = status
admin-th-requests = solicitações
admin-oldest-pending = Solicitação pendente mais antiga:
admin-ticks = Últimos ticks
admin-ticks-none = Nenhum tick registrou uma execução ainda.
admin-th-tick-at = tick em
admin-th-runs = execuções
admin-th-digests = resumos
admin-th-empty-runs = execuções vazias
admin-th-late = atraso da última execução
admin-ticks-note = Os ticks como suas execuções os registraram (um tick que não encontrou nada a enviar não registra execução). Quanto cada tick levou não é guardado; as durações deste processo estão em { $metrics } ({ $metric }).
admin-leases = Concessões
admin-leases-none = Nenhuma tarefa foi executada ainda.
admin-th-job = tarefa
admin-th-holder = em posse de
admin-th-until = até
admin-th-last-run = última execução
admin-events = Eventos para o operador
admin-events-note = Aguardando: todos; enviados, com falha e ignorados: os das últimas 24 horas.
admin-th-events = eventos
admin-events-oldest = Evento aguardando há mais tempo:
admin-events-failure = Última falha:
admin-events-commands = { $list } mostra os eventos; { $replay } envia um período de novo.
admin-events-off = não enviados: [events] url está vazio
admin-events-to = enviados para { $url }
admin-event-failed = evento { $id } ({ $kind }): { $error }
admin-on-time = no horário
admin-delay-s = { $s } s
admin-delay-min = { $min } min { $s } s
admin-delay-h = { $h } h { $min } min
admin-ago = { $at } (há { $delay })
admin-just-now = { $at } (agora mesmo)
admin-none-pending = nenhuma pendente
admin-nobody = ninguém
admin-expired-lease = ninguém (concessão expirada de { $holder })
admin-never = nunca

## Solicitações

admin-filter-status = Status
admin-requests-any = qualquer
admin-filter-sender = Remetente
admin-filter-recipient = Destinatário
admin-requests-none = Nenhuma solicitação corresponde.
admin-th-id = id
admin-th-kind = tipo
admin-th-from = de
admin-th-to = para
admin-th-subject = assunto
admin-th-requested = solicitada
admin-th-finished = concluída
admin-requests-older = Solicitações anteriores
admin-request = Solicitação { $id }
admin-cancel = Cancelar esta solicitação
admin-cancel-note = O que ainda não foi entregue nunca será enviado.
admin-cancelled = Cancelada.
admin-recipients = Destinatários
admin-not-expanded = Ainda não expandida: nenhuma passagem da fila a pegou.
admin-no-recipient = Ninguém: todos os membros do grupo saíram dela, ou o grupo não tinha membros.
admin-th-party = parte
admin-th-channel = canal
admin-th-address = endereço
admin-th-state = situação
admin-th-retries = novas tentativas
admin-th-last-reply = última resposta
admin-delivered = entregue
admin-gave-up = desistiu
admin-open = em aberto
admin-attempts = Tentativas
admin-attempts-none = Nenhuma tentativa ainda.
admin-th-when = quando
admin-th-outcome = resultado
admin-th-reply = resposta
admin-all-requests = Todas as solicitações

## Assinantes e uma assinatura

admin-filter-name = O nome contém
admin-filter-disabled = Só com um endereço desativado
admin-users-none = Nenhum usuário corresponde.
admin-th-verified = verificado
admin-th-bounces = devoluções
admin-disabled = desativado
admin-enabled = ativo
admin-reenable = Reativar
admin-enabled-notice = Reativado: as mensagens voltam a ir para esse endereço; a contagem de devoluções recomeça do zero.
admin-no-subscriptions = Nenhuma assinatura.
admin-their-time = { $when } (horário do assinante)
admin-paused = pausada
admin-details = detalhes
admin-opted-out = Saiu de assinaturas de grupo:
admin-more = Mais
admin-subscription = Assinatura { $id }
admin-party-time = { $when } (horário de { $party })
admin-optouts = Membros que saíram
admin-optouts-none = Ninguém: os resumos chegam a todos os membros.
admin-optouts-note = Os resumos deixam esses membros de fora até que eles, ou você, desfaçam a saída.
admin-th-member = membro
admin-th-since = desde
admin-clear = Desfazer
admin-cleared = Desfeito: os resumos do grupo voltam a chegar a esse membro a partir do próximo.

## A grade da semana (também o desenho e a tabela; o `digestd grid` continua em inglês)

admin-grid = Grade da semana
admin-grid-hours = Horas em
admin-grid-server = horário do servidor (UTC)
admin-grid-local = horário local de cada assinante
admin-grid-week = Semana de
admin-grid-user = Usuário
admin-grid-all = todos
admin-grid-show = Mostrar
admin-grid-table = Como tabela
admin-grid-title = resumos da semana de { $week } ({ $scope })
admin-grid-scope-all = todos os usuários
admin-grid-scope-user = usuário { $user }
admin-grid-table-title = { $title }, { $time }
admin-grid-time-local = horário local
admin-grid-time-server = horário do servidor (UTC)
admin-grid-subtitle = Resumos por hora da semana, { $time }
admin-grid-cell = { $day } { $hour } { $time }: { $digests ->
    [0] { $digests } resumos
    [one] { $digests } resumo
   *[other] { $digests } resumos
}, { $empty ->
    [0] { $empty } execuções vazias
    [one] { $empty } execução vazia
   *[other] { $empty } execuções vazias
}
admin-grid-dot = { $empty ->
    [0] { $empty } execuções vazias
    [one] { $empty } execução vazia
   *[other] { $empty } execuções vazias
}
admin-grid-hour-axis = hora do dia ({ $time })
admin-grid-day-axis = dia
admin-grid-scale = resumos por hora:
admin-grid-empty-runs = { $empty ->
    [0] { $empty } execuções vazias (executadas, nada a enviar) não contadas
    [one] { $empty } execução vazia (executada, nada a enviar) não contada
   *[other] { $empty } execuções vazias (executadas, nada a enviar) não contadas
}
admin-grid-peak = pico: { $day } { $hour } com { $digests } de { $total ->
    [0] { $total } resumos
    [one] { $total } resumo
   *[other] { $total } resumos
}
admin-grid-total = total

## Os nomes do que a fila guarda (links, filtros e formulários mantêm a
## palavra guardada)

admin-status-pending = aguardando
admin-status-sending = enviando
admin-status-sent = enviada
admin-status-partial-failure = falha parcial
admin-status-failed = com falha
admin-status-cancelled = cancelada
admin-event-status-pending = aguardando
admin-event-status-sent = enviado
admin-event-status-failed = com falha
admin-event-status-skipped = ignorado
admin-kind-digest = resumo
admin-kind-notification = notificação
admin-outcome-sent = aceito
admin-outcome-transient = recusa temporária
admin-outcome-permanent = recusa definitiva
admin-outcome-gave-up = desistiu

## O que um filtro ou formulário recusou (um valor informado aparece
## escapado e cortado; nada foi alterado)

admin-refused-long = O campo “{ $field }” tem mais de { $max } caracteres.
admin-refused-control = O campo “{ $field }” contém um caractere de controle, o que não é permitido.
admin-refused-status = “{ $value }” não é um status: escolha um da lista.
admin-refused-name = “{ $value }” não é um nome válido: use de 1 a { $max } letras, dígitos, “.”, “_” ou “-”.
admin-refused-no-party = Não há usuário nem grupo chamado “{ $value }”.
admin-refused-before = “{ $value }” não é um ID de solicitação.
admin-refused-disabled = “{ $value }” não é um valor válido para “{ admin-filter-disabled }”: use 1 ou nada.
admin-refused-time = “{ $value }” não é um horário de referência da grade: escolha { admin-grid-server } ou { admin-grid-local }.
admin-refused-week = “{ $value }” não é um instante: use RFC 3339, por exemplo 2026-11-23T00:00:00Z.
admin-refused-channel = “{ $value }” não é um canal.
admin-refused-no-request = Essa solicitação não existe.
admin-refused-no-subscription = Essa assinatura não existe.
admin-refused-not-open = Esta solicitação já foi concluída ({ $status }): só é possível cancelar solicitações aguardando ou em envio.
admin-refused-no-address = { $party } não tem endereço de { $channel }.
admin-refused-not-opted-out = { $member } não saiu desta assinatura.
