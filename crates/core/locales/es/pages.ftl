# Las páginas en español: gestión, baja, alta y su confirmación, el
# resumen completo y las páginas de aviso.

## Todas las páginas

page-manage-link = Gestionar tus resúmenes
page-bad-link-title = Este enlace no es válido
page-bad-link = Este enlace no es válido. Usa el enlace más reciente de uno de tus resúmenes.
page-not-done = No se hizo nada
page-not-a-form = El formulario debe enviarse como formulario. No se cambió nada.
page-expired-title = Formulario caducado
page-expired = Este formulario ya no es válido: no se cambió nada. Vuelve a abrir la página e inténtalo de nuevo.
page-failed-title = Algo salió mal
page-failed = Algo salió mal por nuestra parte; no se cambió nada. Inténtalo más tarde.
page-too-large = El formulario es más grande de lo que acepta este servidor. No se cambió nada.
page-busy = El servidor está ocupado; no se cambió nada. Inténtalo de nuevo en un momento.
page-language = Idioma

## Una suscripción tal como la describe una página

when-hourly = Cada hora
when-daily = Cada día a las { $hour }
when-weekly = Cada semana, el { $day } a las { $hour }
frequency-hourly = Cada hora
frequency-daily = Cada día
frequency-weekly = Cada semana
kind-changes = cambios
kind-upcoming = elementos próximos
collection-numbered = colección { $id }
sub-by = por { $channels }
channel-email = correo electrónico
channel-xmpp = XMPP
channel-sms = SMS
channel-webhook = webhook
channel-slack = Slack
channel-discord = Discord
channel-teams = Teams
channel-ntfy = ntfy
channel-matrix = Matrix
sub-paused = en pausa
sub-through-group = a través del grupo { $group }
sub-through-group-yours = a través del grupo { $group } (solo para ti: el grupo la conserva)
sub-group-time = { $when } (hora del grupo)
sub-paused-by-group = pausada por el grupo
sub-stopped-for-you = detenida para ti
sub-already-paused = ya en pausa
sub-already-stopped = ya detenida para ti

## La página de gestión

manage-title = Tus resúmenes
manage-heading = Tus resúmenes, { $name }
manage-times-hour12 = Las horas están en { $zone } ({ $abbr }), en formato de 12 horas.
manage-times-hour24 = Las horas están en { $zone } ({ $abbr }), en formato de 24 horas.
manage-subs-heading = Suscripciones
manage-none = No tienes suscripciones.
manage-time = Hora
manage-change-time = Cambiar la hora
manage-send-now = Enviar ahora
manage-resume = Reanudar
manage-pause = Pausar
manage-unsubscribe = Darse de baja
manage-for-good = para siempre
manage-end = Terminar
manage-cadence = Frecuencia y canales
manage-how-often = Frecuencia
manage-at = A las (diario y semanal)
manage-on = El (semanal)
manage-by = Por
manage-cadence-note = El próximo resumen llega a la nueva hora e incluye todo desde el anterior.
manage-save = Guardar
manage-groups = A través de tus grupos
manage-groups-note = Un grupo al que perteneces se suscribió a estos. Detener uno lo detiene solo para ti: el grupo lo conserva.
manage-optin = Deshacer: enviármelo de nuevo
manage-optout = No enviármelo más
manage-settings = Tus ajustes
manage-timezone = Zona horaria
manage-daily-hour = Nuevos resúmenes diarios a las (ahora { $hour })
manage-week-start = Las semanas empiezan el (ahora { $day })
manage-locale = Idioma y región
manage-quiet = Horas de silencio (desde-hasta, p. ej. 22:00-07:00; vacío para ninguna)
manage-quiet-note = Las notificaciones esperan a que terminen tus horas de silencio, y los resúmenes de cada hora que caen dentro llegan juntos en el primero después. Los resúmenes diarios y semanales se envían igualmente.
manage-quiet-inside = { $what }: se envía a las { $hour }, dentro de tus horas de silencio: los resúmenes se envían igualmente; solo esperan las notificaciones y los resúmenes de cada hora.
manage-where = Adónde van los resúmenes
contact-verified = verificada
contact-not-verified = sin verificar
contact-disabled = desactivada (rebotó)
contact-by-operator = configurada por el operador
manage-matrix = ID de Matrix
manage-matrix-now = ID de Matrix (ahora { $id })
manage-matrix-note = Tu ID de usuario (@tu:example.org): los resúmenes llegan desde nuestra cuenta en una sala directa, cuando aceptes su invitación. O el ID (!sala:example.org) de una sala a la que invitaste a nuestra cuenta.
manage-matrix-change = Cambiar el ID de Matrix
manage-matrix-add = Añadir un ID de Matrix
manage-matrix-remove = Quitar el ID de Matrix
manage-new-link = Un enlace nuevo
manage-new-link-note = Si alguien más puede tener el enlace de esta página (un resumen reenviado, una pantalla compartida), pide uno nuevo: se envía a tu dirección de correo y este enlace deja de funcionar. Los enlaces de baja de los resúmenes que ya recibiste siguen funcionando.
manage-new-link-button = Enviarme un enlace nuevo
manage-stop = Detenerlo todo
manage-stop-note = Pausa todas las suscripciones, detiene para ti los resúmenes de todos los grupos y cancela lo que está en cola. Puedes reanudar cada una aquí.
manage-stop-button = Detener todos los resúmenes

## Lo que dice la página de gestión después de un cambio

done-pause = En pausa. No se envía nada hasta que la reanudes.
done-resume = Reanudada: el próximo resumen llega a su hora, sin lo que pasó mientras estaba en pausa.
done-hour = Cambiado: el próximo resumen llega a la nueva hora.
done-cadence = Cambiado: el próximo resumen llega a la nueva hora e incluye todo desde el anterior.
done-flushed = Enviado: el resumen va en camino. El próximo incluye solo lo que cambie a partir de ahora.
done-nothing = No hay nada pendiente: no se envió nada.
done-end = Terminada para siempre.
done-prefs = Guardado. Tus resúmenes siguen los nuevos ajustes a partir de su próximo envío.
done-stop = Todo está detenido: todas las suscripciones están en pausa, no se te envía ningún resumen de grupo y no se enviará nada de lo que estaba en cola.
done-optout = Detenida para ti: el grupo conserva su resumen y sus demás miembros lo siguen recibiendo. Puedes deshacerlo aquí cuando quieras.
done-optin = Reactivada: los resúmenes del grupo te vuelven a llegar a partir de su próximo envío.
done-matrix = Guardado: los resúmenes por Matrix van al nuevo ID a partir de su próximo envío.
done-unmatrix = Quitado: ya no se te envía nada por Matrix.
new-link-title = Un enlace nuevo va en camino
new-link-sent = Enviamos un enlace nuevo a tu dirección de correo. El enlace con el que llegaste aquí ya no abre esta página; los enlaces de baja de los resúmenes que recibiste siguen funcionando.
refused-end = marca la casilla para confirmar que esta suscripción termina para siempre
refused-channels = elige al menos una forma de recibirlo
refused-no-matrix = no tienes ningún ID de Matrix que quitar

## La comprobación propia de un campo rechazó un valor.

refusal-timezone-malformed = «{ $value }» no es una zona horaria válida: elige una de la lista
refusal-timezone-unknown = «{ $value }» no es una zona horaria IANA conocida: elige una de la lista
refusal-timezone-nearest = «{ $value }» no es una zona horaria IANA conocida. ¿Quisiste decir { $nearest }?
refusal-locale = «{ $value }» no es un código de idioma válido: usa un código como es-ES
refusal-hour = «{ $value }» no es una hora válida: indica una hora en punto de 0 a 23
refusal-quiet-hint = escribe HH:MM-HH:MM, p. ej. 22:00-07:00, o deja el campo vacío si no quieres ninguna
refusal-quiet-long = horas de silencio no válidas «{ $value }»: más de { $max } bytes ({ refusal-quiet-hint })
refusal-quiet-char = horas de silencio no válidas «{ $value }»: { $code } no es un dígito ASCII ni un «-» ({ refusal-quiet-hint })
refusal-quiet-dash = horas de silencio no válidas «{ $value }»: falta el «-» entre el inicio y el fin ({ refusal-quiet-hint })
refusal-quiet-start = horas de silencio no válidas «{ $value }»: el inicio, «{ $part }», no tiene el formato HH:MM ({ refusal-quiet-hint })
refusal-quiet-end = horas de silencio no válidas «{ $value }»: el fin, «{ $part }», no tiene el formato HH:MM ({ refusal-quiet-hint })
refusal-quiet-same = horas de silencio no válidas «{ $value }»: el inicio y el fin son iguales ({ refusal-quiet-hint })
refusal-matrix-hint = usa @usuario:servidor o !sala:servidor
refusal-matrix-empty = ID de Matrix no válido: el campo está vacío ({ refusal-matrix-hint })
refusal-matrix-long = ID de Matrix no válido «{ $value }»: tiene más de { $max } bytes ({ refusal-matrix-hint })
refusal-matrix-space = ID de Matrix no válido «{ $value }»: contiene espacios ({ refusal-matrix-hint })
refusal-matrix-char = ID de Matrix no válido «{ $value }»: contiene un carácter de control o no ASCII ({ refusal-matrix-hint })
refusal-matrix-no-server = ID de Matrix no válido «{ $value }»: no indica ningún servidor (:servidor) ({ refusal-matrix-hint })
refusal-matrix-no-local = ID de Matrix no válido «{ $value }»: no hay nada antes de «:» ({ refusal-matrix-hint })
refusal-matrix-sigil = ID de Matrix no válido «{ $value }»: no empieza ni por @ (un usuario) ni por ! (una sala)
refusal-matrix-port = ID de Matrix no válido «{ $value }»: el puerto del servidor no está entre 1 y 65535 ({ refusal-matrix-hint })
refusal-matrix-server = ID de Matrix no válido «{ $value }»: el nombre del servidor no es un nombre de host ni una dirección IP ({ refusal-matrix-hint })
refusal-email-control = dirección de correo no válida «{ $value }»: contiene un carácter de control
refusal-email-non-ascii = dirección de correo no válida «{ $value }»: no se admiten direcciones con tildes, eñes u otros caracteres no ASCII
refusal-email-long = dirección de correo no válida «{ $value }»: tiene más de 254 caracteres
refusal-email-no-at = dirección de correo no válida «{ $value }»: falta la «@»
refusal-email-local-length = dirección de correo no válida «{ $value }»: la parte antes de la «@» debe tener de 1 a 64 caracteres
refusal-email-dots = dirección de correo no válida «{ $value }»: hay un punto mal colocado antes de la «@» (al principio, al final o dos seguidos)
refusal-email-quoting = dirección de correo no válida «{ $value }»: la parte antes de la «@» tiene un carácter que aquí no se admite
refusal-email-domain = dirección de correo no válida «{ $value }»: la parte después de la «@» no es un nombre de dominio válido
refusal-email-no-dot = dirección de correo no válida «{ $value }»: el dominio necesita un punto (p. ej. example.com)

## Baja

unsubscribe-title = Darse de baja
unsubscribe-ask = ¿Darse de baja?
unsubscribe-older = Este enlace viene de un mensaje anterior. Todavía puede detener los resúmenes con los que se envió, y nada más: para todo lo demás, usa el enlace de tu resumen más reciente.
unsubscribe-stops = Esto detiene:
unsubscribe-button = Darse de baja
unsubscribed = Baja realizada
unsubscribed-note = No se enviará nada más de esto:
subscribed-again = Suscrito de nuevo
subscribed-again-note = Estos vuelven a estar activos a partir de su próximo envío:
unsubscribe-undo = Deshacer
unsubscribe-manage-all = Gestionar todos tus resúmenes
one-click-malformed = Una baja con un clic debe enviar exactamente List-Unsubscribe=One-Click. No se cambió nada.
one-click-done = Te diste de baja. No se enviará nada más de estos resúmenes.

## Alta y confirmación

signup-title = Suscribirse
signup-heading = Suscribirse a resúmenes
signup-sent-title = Revisa tu correo
signup-sent = Si la dirección puede recibir resúmenes, va en camino un mensaje con un enlace. Abre el enlace y pulsa «{ signup-confirm-button }» para empezar tus resúmenes. No se envía nada hasta que lo hagas.
signup-nothing-offered = Por ahora no se ofrece nada para suscribirse aquí.
signup-email = Dirección de correo
signup-collections = Colecciones
signup-zone = Tu zona horaria
signup-submit = Suscribirse
signup-note = Enviamos un único mensaje para confirmar la dirección; nada más hasta que confirmes.
signup-limited-title = Demasiadas altas
signup-limited = Últimamente llegaron demasiadas altas desde tu red o a esta dirección, o se hicieron demasiadas aquí en la última hora. No se envió nada. Inténtalo de nuevo después de las { $when } UTC.
signup-refused-email-long = la dirección de correo es demasiado larga
signup-refused-frequency = elige cada hora, cada día o cada semana
signup-refused-hour = elige una hora de 0 a 23
signup-refused-day = elige un día de la semana
signup-refused-zone = elige una zona horaria de la lista
signup-refused-collections = elige al menos una colección
signup-refused-too-many = demasiadas colecciones
signup-refused-unknown = elige colecciones de la lista
signup-wish = { $when } ({ $zone })
confirm-title = Confirmar
confirm-heading = Confirma tu suscripción
confirm-digests-of = Resúmenes de:
signup-confirm-button = Confirmar
confirm-done-title = Suscrito
confirm-done = Tus resúmenes empiezan en su próximo envío.
confirm-already-title = Ya confirmado
confirm-already = Esta alta ya se confirmó antes; no se hizo nada más.

## El resumen completo

digest-empty = Este resumen está vacío.
digest-more = Y { $more } más que no aparecen aquí: esta página muestra los primeros { $listed } de { $count ->
    [one] { $count } elemento
   *[other] { $count } elementos
}.
digest-all = { $count ->
    [one] { $count } elemento.
   *[other] Los { $count } elementos.
}
