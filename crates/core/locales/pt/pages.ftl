# As páginas em português do Brasil: gerenciar, cancelar, assinar e a
# confirmação, o resumo completo e as páginas de aviso.

## Todas as páginas

page-manage-link = Gerenciar seus resumos
page-bad-link-title = Este link não é válido
page-bad-link = Este link não é válido. Use o link mais recente de um dos seus resumos.
page-not-done = Nada foi feito
page-not-a-form = O formulário precisa ser enviado como formulário. Nada foi alterado.
page-expired-title = Formulário expirado
page-expired = Este formulário não é mais válido: nada foi alterado. Abra a página de novo e tente outra vez.
page-failed-title = Algo deu errado
page-failed = Algo deu errado do nosso lado; nada foi alterado. Tente novamente mais tarde.
page-too-large = O formulário é maior do que este servidor aceita. Nada foi alterado.
page-busy = O servidor está ocupado; nada foi alterado. Tente de novo daqui a pouco.
page-language = Idioma

## Uma assinatura como uma página a descreve

when-hourly = A cada hora
when-daily = Diariamente às { $hour }
when-weekly = Semanalmente, { $day } às { $hour }
frequency-hourly = A cada hora
frequency-daily = Diariamente
frequency-weekly = Semanalmente
kind-changes = alterações
kind-upcoming = próximos itens
collection-numbered = coleção { $id }
sub-by = por { $channels }
channel-email = e-mail
channel-xmpp = XMPP
channel-sms = SMS
channel-webhook = webhook
channel-slack = Slack
channel-discord = Discord
channel-teams = Teams
channel-ntfy = ntfy
channel-matrix = Matrix
sub-paused = pausada
sub-through-group = pelo grupo { $group }
sub-through-group-yours = pelo grupo { $group } (só para você: o grupo a mantém)
sub-group-time = { $when } (horário do grupo)
sub-paused-by-group = pausada pelo grupo
sub-stopped-for-you = interrompida para você
sub-already-paused = já pausada
sub-already-stopped = já interrompida para você

## A página de gerenciamento

manage-title = Seus resumos
manage-heading = Seus resumos, { $name }
manage-times-hour12 = Os horários estão em { $zone } ({ $abbr }), no formato de 12 horas.
manage-times-hour24 = Os horários estão em { $zone } ({ $abbr }), no formato de 24 horas.
manage-subs-heading = Assinaturas
manage-none = Você não tem assinaturas.
manage-time = Horário
manage-change-time = Mudar o horário
manage-send-now = Enviar agora
manage-resume = Retomar
manage-pause = Pausar
manage-unsubscribe = Cancelar assinatura
manage-for-good = de vez
manage-end = Encerrar
manage-cadence = Frequência e canais
manage-how-often = Frequência
manage-at = Às (diário e semanal)
manage-on = No dia (semanal)
manage-by = Por
manage-cadence-note = O próximo resumo chega no novo horário e traz tudo desde o último.
manage-save = Salvar
manage-groups = Pelos seus grupos
manage-groups-note = Um grupo do qual você participa assinou estes. Interromper um vale só para você: o grupo o mantém.
manage-optin = Desfazer: voltar a enviar para mim
manage-optout = Parar de enviar para mim
manage-settings = Suas configurações
manage-timezone = Fuso horário
manage-daily-hour = Novos resumos diários às (agora { $hour })
manage-week-start = As semanas começam na (agora { $day })
manage-locale = Idioma e região
manage-quiet = Horário de silêncio (de-até, por exemplo 22:00-07:00; vazio para nenhum)
manage-quiet-note = As notificações esperam o fim do seu horário de silêncio, e os resumos de hora em hora que caem nele chegam juntos no primeiro depois. Os resumos diários e semanais são enviados mesmo assim.
manage-quiet-inside = { $what }: enviado às { $hour }, dentro do seu horário de silêncio: os resumos são enviados mesmo assim; só as notificações e os resumos de hora em hora esperam.
manage-where = Para onde vão os resumos
contact-verified = verificado
contact-not-verified = não verificado
contact-disabled = desativado (devolvido)
contact-by-operator = definido pelo operador
manage-matrix = ID do Matrix
manage-matrix-now = ID do Matrix (agora { $id })
manage-matrix-note = Seu ID de usuário (@voce:example.org): os resumos vêm da nossa conta numa sala direta, assim que você aceitar o convite. Ou o ID (!sala:example.org) de uma sala para a qual você convidou a nossa conta.
manage-matrix-change = Mudar o ID do Matrix
manage-matrix-add = Adicionar ID do Matrix
manage-matrix-remove = Remover o ID do Matrix
manage-new-link = Um novo link
manage-new-link-note = Se outra pessoa puder ter o link desta página (um resumo encaminhado, uma tela compartilhada), peça um novo: ele é enviado para o seu e-mail e este link deixa de funcionar. Os links de cancelamento dos resumos que você já recebeu continuam funcionando.
manage-new-link-button = Enviar um novo link
manage-stop = Parar tudo
manage-stop-note = Pausa todas as assinaturas, interrompe para você os resumos de todos os grupos e cancela o que está na fila. Você pode retomar cada uma aqui.
manage-stop-button = Parar todos os resumos

## O que a página de gerenciamento diz depois de uma alteração

done-pause = Pausada. Nada é enviado até você retomá-la.
done-resume = Retomada: o próximo resumo chega no horário de sempre, sem o que aconteceu durante a pausa.
done-hour = Alterado: o próximo resumo chega no novo horário.
done-cadence = Alterado: o próximo resumo chega no novo horário e traz tudo desde o último.
done-flushed = Enviado: o resumo está a caminho. O próximo traz só o que mudar a partir de agora.
done-nothing = Não há nada pendente: nada foi enviado.
done-end = Encerrada de vez.
done-prefs = Salvo. Seus resumos seguem as novas configurações a partir do próximo envio.
done-stop = Tudo foi interrompido: todas as assinaturas estão pausadas, nenhum resumo de grupo é enviado para você e nada do que estava na fila será enviado.
done-optout = Interrompida para você: o grupo mantém o resumo e os outros membros continuam recebendo. Você pode desfazer isso aqui quando quiser.
done-optin = Reativada: os resumos do grupo voltam a chegar para você a partir do próximo envio.
done-matrix = Salvo: os resumos pelo Matrix vão para o novo ID a partir do próximo envio.
done-unmatrix = Removido: nada mais é enviado para você pelo Matrix.
new-link-title = Um novo link está a caminho
new-link-sent = Enviamos um novo link para o seu e-mail. O link que você usou para chegar aqui não abre mais esta página; os links de cancelamento dos resumos recebidos continuam funcionando.
refused-end = marque a caixa para confirmar que esta assinatura termina de vez
refused-channels = escolha pelo menos uma forma de recebê-lo
refused-no-matrix = você não tem um ID do Matrix para remover

## A verificação própria de um campo recusou um valor.

refusal-timezone-malformed = “{ $value }” não é um fuso horário válido: escolha um da lista
refusal-timezone-unknown = “{ $value }” não é um fuso horário IANA conhecido: escolha um da lista
refusal-timezone-nearest = “{ $value }” não é um fuso horário IANA conhecido. Você quis dizer { $nearest }?
refusal-locale = “{ $value }” não é um código de idioma válido: use um código como pt-BR
refusal-hour = “{ $value }” não é uma hora válida: informe uma hora cheia de 0 a 23
refusal-quiet-hint = use HH:MM-HH:MM, por exemplo 22:00-07:00, ou deixe o campo vazio se não quiser nenhum
refusal-quiet-long = horário de silêncio inválido “{ $value }”: mais de { $max } bytes ({ refusal-quiet-hint })
refusal-quiet-char = horário de silêncio inválido “{ $value }”: { $code } não é um dígito ASCII nem um “-” ({ refusal-quiet-hint })
refusal-quiet-dash = horário de silêncio inválido “{ $value }”: falta o “-” entre o início e o fim ({ refusal-quiet-hint })
refusal-quiet-start = horário de silêncio inválido “{ $value }”: o início, “{ $part }”, não está no formato HH:MM ({ refusal-quiet-hint })
refusal-quiet-end = horário de silêncio inválido “{ $value }”: o fim, “{ $part }”, não está no formato HH:MM ({ refusal-quiet-hint })
refusal-quiet-same = horário de silêncio inválido “{ $value }”: o início e o fim são iguais ({ refusal-quiet-hint })
refusal-matrix-hint = use @usuario:servidor ou !sala:servidor
refusal-matrix-empty = ID do Matrix inválido: o campo está vazio ({ refusal-matrix-hint })
refusal-matrix-long = ID do Matrix inválido “{ $value }”: tem mais de { $max } bytes ({ refusal-matrix-hint })
refusal-matrix-space = ID do Matrix inválido “{ $value }”: contém espaços ({ refusal-matrix-hint })
refusal-matrix-char = ID do Matrix inválido “{ $value }”: contém um caractere de controle ou não ASCII ({ refusal-matrix-hint })
refusal-matrix-no-server = ID do Matrix inválido “{ $value }”: não indica nenhum servidor (:servidor) ({ refusal-matrix-hint })
refusal-matrix-no-local = ID do Matrix inválido “{ $value }”: não há nada antes do “:” ({ refusal-matrix-hint })
refusal-matrix-sigil = ID do Matrix inválido “{ $value }”: não começa com @ (um usuário) nem com ! (uma sala)
refusal-matrix-port = ID do Matrix inválido “{ $value }”: a porta do servidor não está entre 1 e 65535 ({ refusal-matrix-hint })
refusal-matrix-server = ID do Matrix inválido “{ $value }”: o nome do servidor não é um nome de host nem um endereço IP ({ refusal-matrix-hint })
refusal-email-control = endereço de e-mail inválido “{ $value }”: contém um caractere de controle
refusal-email-non-ascii = endereço de e-mail inválido “{ $value }”: endereços com acentos ou outros caracteres não ASCII não são aceitos
refusal-email-long = endereço de e-mail inválido “{ $value }”: tem mais de 254 caracteres
refusal-email-no-at = endereço de e-mail inválido “{ $value }”: falta o “@”
refusal-email-local-length = endereço de e-mail inválido “{ $value }”: a parte antes do “@” deve ter de 1 a 64 caracteres
refusal-email-dots = endereço de e-mail inválido “{ $value }”: há um ponto fora do lugar antes do “@” (no começo, no fim ou dois seguidos)
refusal-email-quoting = endereço de e-mail inválido “{ $value }”: a parte antes do “@” tem um caractere que não é aceito aqui
refusal-email-domain = endereço de e-mail inválido “{ $value }”: a parte depois do “@” não é um nome de domínio válido
refusal-email-no-dot = endereço de e-mail inválido “{ $value }”: o domínio precisa de um ponto (por exemplo, example.com)

## Cancelar

unsubscribe-title = Cancelar assinatura
unsubscribe-ask = Cancelar assinatura?
unsubscribe-older = Este link é de uma mensagem mais antiga. Ele ainda pode interromper os resumos com os quais foi enviado, e nada mais: para todo o resto, use o link do seu resumo mais recente.
unsubscribe-stops = Isto interrompe:
unsubscribe-button = Cancelar assinatura
unsubscribed = Assinatura cancelada
unsubscribed-note = Nada mais disto será enviado:
subscribed-again = Assinatura retomada
subscribed-again-note = Estes voltam a valer a partir do próximo envio:
unsubscribe-undo = Desfazer
unsubscribe-manage-all = Gerenciar todos os seus resumos
one-click-malformed = Um cancelamento com um clique precisa enviar exatamente List-Unsubscribe=One-Click. Nada foi alterado.
one-click-done = Sua assinatura foi cancelada. Nada mais destes resumos será enviado.

## Assinar e confirmar

signup-title = Assinar
signup-heading = Assinar resumos
signup-sent-title = Confira seu e-mail
signup-sent = Se o endereço puder receber resumos, uma mensagem com um link está a caminho. Abra o link e clique em “{ signup-confirm-button }” para começar seus resumos. Nada é enviado antes disso.
signup-nothing-offered = No momento, nada é oferecido para assinatura aqui.
signup-email = Endereço de e-mail
signup-collections = Coleções
signup-zone = Seu fuso horário
signup-submit = Assinar
signup-note = Enviamos uma única mensagem para confirmar o endereço; nada mais até você confirmar.
signup-limited-title = Pedidos demais
signup-limited = Vieram pedidos de assinatura demais da sua rede ou para este endereço nos últimos tempos, ou foram feitos pedidos demais aqui na última hora. Nada foi enviado. Tente novamente depois das { $when } UTC.
signup-refused-email-long = o endereço de e-mail é longo demais
signup-refused-frequency = escolha a cada hora, diariamente ou semanalmente
signup-refused-hour = escolha uma hora de 0 a 23
signup-refused-day = escolha um dia da semana
signup-refused-zone = escolha um fuso horário da lista
signup-refused-collections = escolha pelo menos uma coleção
signup-refused-too-many = coleções demais
signup-refused-unknown = escolha coleções da lista
signup-wish = { $when } ({ $zone })
confirm-title = Confirmar
confirm-heading = Confirme sua assinatura
confirm-digests-of = Resumos de:
signup-confirm-button = Confirmar
confirm-done-title = Assinatura feita
confirm-done = Seus resumos começam no próximo envio.
confirm-already-title = Já confirmado
confirm-already = Esta assinatura já foi confirmada antes; nada mais foi feito.

## O resumo completo

digest-empty = Este resumo está vazio.
digest-more = E mais { $more } que não aparecem aqui: esta página mostra os primeiros { $listed } de { $count ->
    [one] { $count } item
   *[other] { $count } itens
}.
digest-all = { $count ->
    [one] { $count } item.
   *[other] Todos os { $count } itens.
}
