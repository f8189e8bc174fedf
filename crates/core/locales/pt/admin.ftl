# As páginas do operador em /admin em português do Brasil
# (`[i18n] operator_locale`). Os nomes de status, canal, tipo e resultado
# aparecem como o digestd os guarda.

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

## A grade da semana (o desenho e a tabela são os do `digestd grid`, em inglês)

admin-grid = Grade da semana
admin-grid-hours = Horas em
admin-grid-server = horário do servidor (UTC)
admin-grid-local = horário local de cada assinante
admin-grid-week = Semana de
admin-grid-user = Usuário
admin-grid-all = todos
admin-grid-show = Mostrar
admin-grid-table = Como tabela
