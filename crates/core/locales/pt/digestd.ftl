# digestd's words in Portuguese (Brazil). Keys and variables as in the English catalogue.

weekday-short = { $day ->
    [mon] seg.
    [tue] ter.
    [wed] qua.
    [thu] qui.
    [fri] sex.
    [sat] sáb.
   *[sun] dom.
}
weekday-long = { $day ->
    [mon] segunda-feira
    [tue] terça-feira
    [wed] quarta-feira
    [thu] quinta-feira
    [fri] sexta-feira
    [sat] sábado
   *[sun] domingo
}
month-short = { $month ->
    [jan] jan.
    [feb] fev.
    [mar] mar.
    [apr] abr.
    [may] mai.
    [jun] jun.
    [jul] jul.
    [aug] ago.
    [sep] set.
    [oct] out.
    [nov] nov.
   *[dec] dez.
}
date-month-first = { $weekday }, { $month } { $day }
date-day-first = { $weekday }, { $day } de { $month }
someone = Alguém
people-two = { $first } e { $second }
people-more = { $first }, { $second } e { $rest ->
    [one] mais { $rest } pessoa
   *[other] mais { $rest } pessoas
}
attribute-start = o horário de início
attribute-reminder = o lembrete
attribute-rrule = a recorrência
attribute-kind = o tipo
attribute-body = o texto
line-created = { $who } criou { $title } ({ $kind })
line-created-starting = { $who } criou { $title } ({ $kind }), com início em { $when }
line-deleted = { $who } excluiu { $title } ({ $kind })
line-added = { $who } adicionou { $title } a { $collection }
line-removed = { $who } removeu { $title } de { $collection }
line-now = { $who } marcou { $title } como atual
line-edited = { $who } alterou { $attribute } de { $title } { $change }{ $also }
line-edited-bare = { $who } alterou { $title }
line-edited-also = , e { $attribute } { $change }
line-edited-more = , e mais { $count ->
    [one] { $count } alteração
   *[other] { $count } alterações
}
line-earlier = Registrado depois, em { $when }: { $line }
line-upcoming = { $when }: { $title }
line-upcoming-notes = { $when }: { $title } ({ $notes })
note-reminder = lembrete
note-repeats = repete
note-reminder-repeats = lembrete, repete
change-from-to = de { $from } para { $to }
change-same-day = de { $from } para { $to } { $zone } em { $date }
change-to = para { $to }
change-from-to-nothing = de { $from } para vazio
change-to-nothing = para vazio
quoted = “{ $value }”
subject-hourly-digest = Resumo por hora: { $collection }
subject-daily-digest = Resumo diário: { $collection }
subject-weekly-digest = Resumo semanal: { $collection }
subject-hourly-agenda = Agenda por hora: { $collection }
subject-daily-agenda = Agenda diária: { $collection }
subject-weekly-agenda = Agenda semanal: { $collection }
all-collections = todas as coleções
collections-yours = suas coleções
collections-two = { $first } e { $second }
collections-many = { $count } coleções
heading-no-changes = Nenhuma alteração em { $collections } desde { $since }
heading-changes = { $count ->
    [one] { $count } alteração
   *[other] { $count } alterações
} em { $collections } desde { $since }
heading-nothing-upcoming = Nada previsto em { $collections } { $span }
heading-upcoming = { $count ->
    [one] { $count } item previsto
   *[other] { $count } itens previstos
} em { $collections } { $span }
span-hourly = a partir de { $time } { $zone }
span-daily = no dia a partir de { $date }, { $time } { $zone }
span-weekly = na semana a partir de { $date }
heading-seen = { $heading } ({ $seen })
seen-left-out = { $count ->
    [one] { $count } alteração que você já viu foi omitida
   *[other] { $count } alterações que você já viu foram omitidas
}
more = e mais { $count }
full-digest = ver o resumo completo
the-full-digest = o resumo completo
times-shown = Horários em { $zone }.
manage-subscriptions = Gerenciar suas assinaturas
unsubscribe-digest = Cancelar a assinatura deste resumo
open-full-digest = Abrir o resumo completo
manage-short = Gerenciar
batch-subject = { $subject } (e mais { $count })
notification-sent = Mensagem enviada em { $when } sobre { $subject }
notification-batch-subject = { $subject } (e mais { $count })
signup-subject = Confirme sua assinatura de resumos
signup-asked = Alguém, provavelmente você, pediu resumos de { $names } neste endereço.
signup-open = Para confirmar, abra este link e clique em “{ signup-confirm-button }”:
signup-button = Confirmar minha assinatura
signup-copy = Ou copie este endereço no seu navegador:
signup-until = O link vale até { $until } UTC. Se você não pediu isso, ignore esta mensagem: nada mais será enviado.
